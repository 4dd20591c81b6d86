/**
 * What to stage (StageRequest, ArrayRequest) and the runs a request makes:
 * checked once, at the edge (run-checks.ts), expanded into `repeat` runs
 * ready for the stage script (PreparedRun), each with its staged-index
 * shape. An array's runs are sweep.ts's.
 */
import { preemptFields, type PreemptRequest } from './preemption.js';
import { randomBytes } from 'node:crypto';
import type { TimeSignal } from '../units/duration.js';
import { UsageError } from '../errors.js';
import { validateNotifyUrl } from './notify.js';
import type { Demands, ResourceInput, Resources } from '../resources/spec.js';
import { formatShape } from '../resources/shape.js';
import { labelsOf } from './labels.js';
import { projectOf } from './project.js';
import { validateNewRunId } from './names.js';
import { quote } from '../text/quote.js';
import { lifecycleJson, type LifecycleOptions } from './parked.js';
import { prepareOutputFiles, type OutputFiles } from './output-files.js';
import { decodeRun } from './run-decode.js';
import type { RunRecord } from './run-record.js';
import {
  demandFields,
  parsePinnedGpus,
  checkGpuMemory,
  STAGE_USAGE,
  timeFields,
  validateCommand,
  validateCwd,
  validateEnv,
  validateLabels,
  validatePriority,
} from './run-checks.js';


export const MAX_REPEAT = 100_000;
export const MAX_RETRIES = 100;
/**
 * Everything one stage request stores, over all its repeats (command,
 * environment, labels, working directory...), in bytes: so a batch can
 * neither exhaust this process's memory nor Redis's.
 */
export const MAX_BATCH_BYTES = 64 * 1024 * 1024;

/** A run to stage; its lifecycle options (hold, begin time, dependencies, retry on failure) are in parked.ts. */
export interface StageRequest extends LifecycleOptions, PreemptRequest {
  /** The argv to run (or, with `shell`, the words joined into one `sh -c` script). */
  command: readonly string[];
  /**
   * Demands: specs like `"gpu=1 mem=8G"` (kept as typed, for display), a
   * map of name to amount in millionths, or specs parsed already where they
   * were typed (parseDemands: the CLI's `-r`), which are not parsed again.
   */
  resources?: ResourceInput;
  /** An id of your choosing; must be new. Default: a random id. */
  runId?: string;
  /** Higher runs first; default 0; an integer within ±1,000,000. */
  priority?: number;
  labels?: Record<string, string>;
  /** Added to the worker's environment when the run starts. */
  env?: Record<string, string>;
  /** Working directory; default the current directory. */
  cwd?: string;
  /** Run the command with `sh -c`; without it the argv runs with no shell. */
  shell?: boolean;
  /** Stage this many identical runs; default 1. */
  repeat?: number;
  /**
   * GPU devices to pin the run to, like "0,1": on a worker with devices it
   * needs exactly these; on one without, they only set CUDA_VISIBLE_DEVICES.
   */
  gpus?: string;
  /** Times the run is re-staged when its worker dies under it; default 0. */
  retries?: number;
  /** http(s) URL its worker POSTs the run's record to when it ends (see notify.ts). */
  notify?: string;
  /**
   * Time limit, in ms, or as typed (`2h30m`,
   * `02:30:00`, `9000`): past it the run gets `timeSignal` and is killed
   * after its worker's grace, ending `timeout`. Default: none (a worker's
   * --default-time-limit, if it has one).
   */
  timeLimit?: number | string;
  /** The signal the run gets, and how long before its limit (`SIGUSR1@120s`); default SIGTERM at the limit. */
  timeSignal?: string | TimeSignal;
  /** Stage an array of runs (`fitq stage --array/--param`): see sweep.ts. */
  array?: ArrayRequest | undefined;
  /** Files the worker also writes the run's output to (`fitq stage --output/--error`): see output-files.ts. */
  output?: OutputFiles | undefined;
}

/** How to stage an array (StageRequest.array). */
export interface ArrayRequest {
  /** The index of each run (FITQ_ARRAY_INDEX, `{index}`); default 0, 1, ... for each row of `params`. */
  indices?: readonly number[];
  /** A row of parameters per run (`{name}`, FITQ_PARAM_NAME); with `indices`, as many rows as indices. */
  params?: readonly Readonly<Record<string, string>>[];
  /** At most this many of the array's runs run at once (Slurm's `%N`), across all workers. */
  limit?: number;
}

/** A validated run, ready for the stage script. */
export interface PreparedRun {
  id: string;
  /** Exact demands, as its `resources` field says them (an array's limit included). */
  demands: Resources;
  /** The demands as given, parsed once: its record's `requires` needs no parse. */
  given: Demands;
  /** Pinned GPU devices (empty: any). */
  gpus: readonly number[];
  /** Time limit in ms, if any. */
  timeLimit?: number | undefined;
  priority: number;
  fields: Record<string, string>;
  /** The array it is part of (sweep.ts), and the array's limit (%N). */
  array?: string;
  limit?: number;
}

export function newRunId(): string {
  // 12 hex digits, at least one a letter (about 1 in 280 draws is digits only).
  for (;;) {
    const id = randomBytes(6).toString('hex');
    if (!/^[0-9]+$/.test(id)) return id;
  }
}

/**
 * Validates a request and expands it into `repeat` runs. Throws UsageError.
 * `placeholders` fill the output files' (an array's run's; `{id}` is always there).
 */
export function prepareRuns(request: StageRequest, placeholders: Readonly<Record<string, string>> = {}): PreparedRun[] {
  if (!Array.isArray(request.command)) throw new UsageError(`missing command: ${STAGE_USAGE}`);
  const commandJson = validateCommand([...request.command], request.shell === true);
  const priority = validatePriority(request.priority ?? 0);
  const repeat = request.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT) {
    throw new UsageError(`expected --repeat to be an integer from 1 to ${MAX_REPEAT}, got ${quote(String(repeat))}`);
  }
  const retries = request.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) {
    throw new UsageError(`expected --retries to be an integer from 0 to ${MAX_RETRIES}, got ${quote(String(retries))}`);
  }
  if (request.runId !== undefined && repeat > 1) throw new UsageError('--run-id cannot be combined with --repeat');
  if (request.runId !== undefined) validateNewRunId(request.runId);
  const envJson = validateEnv(request.env ?? {});
  const labelsJson = validateLabels(request.labels ?? {});
  const { demands, given, resources, requires } = demandFields(request.resources);
  const gpus = request.gpus === undefined ? [] : parsePinnedGpus(request.gpus, demands);
  checkGpuMemory(demands, gpus);
  const cwd = validateCwd(request.cwd);
  const fields: Record<string, string> = {
    command: commandJson,
    shell: request.shell ? '1' : '0',
    cwd,
    env: envJson,
    labels: labelsJson,
    resources,
  };
  if (requires !== undefined) fields.requires = requires;
  if (gpus.length > 0) fields.gpus = gpus.join(',');
  if (retries > 0) fields.retries = String(retries);
  if (request.notify !== undefined) fields.notify = validateNotifyUrl(request.notify);
  Object.assign(fields, timeFields(request.timeLimit, request.timeSignal), preemptFields(request));
  const timeLimit = fields.timeLimit === undefined ? undefined : Number(fields.timeLimit);
  const lifecycle = lifecycleJson(request);
  if (lifecycle !== undefined) fields.lifecycle = lifecycle;
  const runBytes = Buffer.byteLength(JSON.stringify(fields));
  if (repeat * runBytes > MAX_BATCH_BYTES) {
    throw new UsageError(
      `batch too large: --repeat ${repeat} of ${runBytes} bytes each is ${repeat * runBytes} bytes (at most ${MAX_BATCH_BYTES}): stage fewer or smaller runs`,
    );
  }
  const output = request.output === undefined ? undefined : prepareOutputFiles(request.output, cwd, Object.keys(placeholders));
  return Array.from({ length: repeat }, () => {
    const id = request.runId ?? newRunId();
    return { id, demands, given, gpus, timeLimit, priority, fields: output ? { ...fields, output: output({ ...placeholders, id }) } : fields };
  });
}

/**
 * The staged-index shape of some demands, pinned GPU devices, time limit,
 * labels (their project) and stager (resources/shape.ts): "a=1,b=2",
 * "none", "gpu=1;gpus=3;t=600000;p=vision;u=alice".
 */
export function shapeOf(demands: Resources, gpus: readonly number[] = [], timeLimitMs?: number, fields: Readonly<Record<string, string>> = {}): string {
  return formatShape({ demands, gpus, timeLimitMs, project: projectOf(labelsOf(fields)), user: fields.user });
}

/** The staged-index shape of a prepared run. */
export const runShape = (run: Pick<PreparedRun, 'demands' | 'gpus' | 'timeLimit' | 'fields'>): string =>
  shapeOf(run.demands, run.gpus, run.timeLimit, run.fields);

/**
 * A prepared run as a read shows it once staged, decoded without parsing
 * its demands again: with its staging number and time (the stage script's
 * reply), or 0 for both when it is only previewed.
 */
export function stagedRecord(run: PreparedRun, seq = 0, timestamp = 0): RunRecord {
  const fields = {
    ...run.fields,
    id: run.id,
    status: 'staged',
    seq: String(seq),
    priority: String(run.priority),
    timestamp: String(timestamp),
    ...(run.array === undefined ? {} : { array: run.array }),
  };
  return decodeRun(fields, { demands: run.demands, typed: run.given }).run;
}
