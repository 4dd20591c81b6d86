/**
 * Staging: validate runs once, at the edge, then store a whole batch in one
 * round trip.
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { formatMicros, MICROS_PER_UNIT } from '../resources/amount.js';
import { parseDeviceList } from '../resources/devices.js';
import { formatResources, toResources, type ResourceInput, type Resources } from '../resources/spec.js';
import { validateRunId } from './names.js';

export const MAX_PRIORITY = 1_000_000;
export const MAX_REPEAT = 100_000;
export const MAX_RETRIES = 100;
/** Limits on what one run may carry, in bytes of UTF-8. */
export const MAX_COMMAND_BYTES = 128 * 1024;
export const MAX_ENV_BYTES = 128 * 1024;

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;

export interface StageRequest {
  /** The argv to run (or, with `shell`, the words joined into one `sh -c` script). */
  command: readonly string[];
  /** Demands: specs like `"gpu=1 mem=8G"`, or a map of name to amount in millionths. */
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
}

/** A validated run, ready for the stage script. */
export interface PreparedRun {
  id: string;
  demands: Resources;
  /** Pinned GPU devices (empty: any). */
  gpus: readonly number[];
  priority: number;
  fields: Record<string, string>;
}

export function newRunId(): string {
  return randomBytes(6).toString('hex');
}

function validateEntries(kind: string, entries: Record<string, string>, pattern: RegExp): void {
  for (const [key, value] of Object.entries(entries)) {
    if (!pattern.test(key)) throw new UsageError(`invalid ${kind} name '${key}'`);
    if (typeof value !== 'string') throw new UsageError(`invalid ${kind} '${key}': value must be a string`);
  }
}

function validateCwd(cwd: string): string {
  const absolute = resolve(cwd);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    throw new UsageError(`--cwd '${cwd}' does not exist`);
  }
  if (!isDirectory) throw new UsageError(`--cwd '${cwd}' is not a directory`);
  return absolute;
}

/** Validates a request and expands it into `repeat` runs. Throws UsageError. */
export function prepareRuns(request: StageRequest): PreparedRun[] {
  const command = [...request.command];
  if (command.length === 0 || command[0] === '') throw new UsageError('missing command: fitq stage [flags] -- COMMAND [ARGS...]');
  const commandJson = JSON.stringify(request.shell ? [command.join(' ')] : command);
  if (Buffer.byteLength(commandJson) > MAX_COMMAND_BYTES) {
    throw new UsageError(`command too large: ${Buffer.byteLength(commandJson)} bytes (at most ${MAX_COMMAND_BYTES})`);
  }
  const priority = request.priority ?? 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY) {
    throw new UsageError(`expected --priority to be an integer within ±${MAX_PRIORITY}, got '${priority}'`);
  }
  const repeat = request.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT) {
    throw new UsageError(`expected --repeat to be an integer from 1 to ${MAX_REPEAT}, got '${repeat}'`);
  }
  const retries = request.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) {
    throw new UsageError(`expected --retries to be an integer from 0 to ${MAX_RETRIES}, got '${retries}'`);
  }
  if (request.runId !== undefined && repeat > 1) throw new UsageError('--run-id cannot be combined with --repeat');
  if (request.runId !== undefined) validateRunId(request.runId);
  const env = request.env ?? {};
  validateEntries('environment variable', env, ENV_NAME_PATTERN);
  const envJson = JSON.stringify(env);
  if (Buffer.byteLength(envJson) > MAX_ENV_BYTES) {
    throw new UsageError(`environment too large: ${Buffer.byteLength(envJson)} bytes (at most ${MAX_ENV_BYTES})`);
  }
  const labels = request.labels ?? {};
  validateEntries('label', labels, LABEL_KEY_PATTERN);
  const demands = toResources(request.resources);
  const gpus = request.gpus === undefined ? [] : parsePinnedGpus(request.gpus, demands);
  const fields: Record<string, string> = {
    command: commandJson,
    shell: request.shell ? '1' : '0',
    cwd: validateCwd(request.cwd ?? process.cwd()),
    env: envJson,
    labels: JSON.stringify(labels),
    resources: formatResources(demands),
  };
  if (gpus.length > 0) fields.gpus = gpus.join(',');
  if (retries > 0) fields.retries = String(retries);
  return Array.from({ length: repeat }, () => ({
    id: request.runId ?? newRunId(),
    demands,
    gpus,
    priority,
    fields,
  }));
}

/**
 * A `--gpus` pin must agree with the run's gpu demand, if it has one: a whole
 * gpu=N needs N devices, a fraction shares exactly one.
 */
function parsePinnedGpus(text: string, demands: Resources): number[] {
  const gpus = parseDeviceList(text, '--gpus');
  const demand = demands.get('gpu');
  if (demand === undefined) return gpus;
  const whole = demand % MICROS_PER_UNIT === 0n;
  const wanted = whole ? Number(demand / MICROS_PER_UNIT) : 1;
  if (gpus.length !== wanted) {
    const asked = `gpu=${formatMicros(demand)}`;
    throw new UsageError(
      `--gpus '${text}' pins ${gpus.length} device${gpus.length === 1 ? '' : 's'} but the run demands ${asked}` +
        (whole ? `: list ${wanted} device${wanted === 1 ? '' : 's'}` : ': a fractional gpu shares exactly one device'),
    );
  }
  return gpus;
}

/**
 * The staged-index shape of some demands: "a=1,b=2", or "none"; a run pinned
 * to GPU devices gets its own shape, "gpu=1;gpus=3".
 */
export function shapeOf(demands: Resources, gpus: readonly number[] = []): string {
  const shape = formatResources(demands, ',') || 'none';
  return gpus.length > 0 ? `${shape};gpus=${gpus.join(',')}` : shape;
}
