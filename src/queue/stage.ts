/**
 * Staging: validate runs once, at the edge, then store a whole batch in one
 * round trip.
 */
import { randomBytes } from 'node:crypto';
import { readlinkSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { formatTimeLimit, formatTimeSignal, MAX_TIME_LIMIT_MS, parseTimeLimit, parseTimeSignal, type TimeSignal } from '../units/duration.js';
import { UsageError } from '../errors.js';
import { validateNotifyUrl } from './notify.js';
import { formatMicros, MICROS_PER_UNIT } from '../resources/amount.js';
import { parseDeviceList } from '../resources/devices.js';
import { formatResources, toResources, typedSpecText, type ResourceInput, type Resources } from '../resources/spec.js';
import { MAX_NAME_LENGTH, validateNewRunId } from './names.js';
import { quote, quoteBytes } from '../text/quote.js';
import { lifecycleJson, type LifecycleOptions } from './parked.js';
import { isWellFormed, REPLACEMENT_CHARACTER } from '../text/utf8.js';
import { prepareOutputFiles, type OutputFiles } from './output-files.js';
import type { ArrayRequest } from './sweep.js';

/** How to stage a run, quoted in the errors that say what is missing. */
export const STAGE_USAGE = 'fitq stage [FLAGS] -- COMMAND [ARGS...]';

export const MAX_PRIORITY = 1_000_000;
export const MAX_REPEAT = 100_000;
export const MAX_RETRIES = 100;
/** Limits on what one run may carry, in bytes of UTF-8. */
export const MAX_COMMAND_BYTES = 128 * 1024;
export const MAX_ENV_BYTES = 128 * 1024;
/** Labels of one run: at most this many, with keys of at most 128 characters, and this many bytes of JSON in all. */
export const MAX_LABELS = 100;
export const MAX_LABELS_BYTES = 64 * 1024;
/**
 * Everything one stage request stores, over all its repeats (command,
 * environment, labels, working directory...), in bytes: so a batch can
 * neither exhaust this process's memory nor Redis's.
 */
export const MAX_BATCH_BYTES = 64 * 1024 * 1024;

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;

/** A run to stage; its lifecycle options (hold, begin time, dependencies, retry on failure) are in parked.ts. */
export interface StageRequest extends LifecycleOptions {
  /** The argv to run (or, with `shell`, the words joined into one `sh -c` script). */
  command: readonly string[];
  /**
   * Demands: specs like `"gpu=1 mem=8G"` (kept as typed, for display), or a
   * map of name to amount in millionths.
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

/** A validated run, ready for the stage script. */
export interface PreparedRun {
  id: string;
  demands: Resources;
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

function validateEntries(kind: string, entries: Record<string, string>, pattern: RegExp, rule: string): void {
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    throw new UsageError(`invalid ${kind}s: expected an object of strings`);
  }
  for (const [key, value] of Object.entries(entries)) {
    if (!pattern.test(key) || key.length > MAX_NAME_LENGTH) {
      throw new UsageError(`invalid ${kind} name ${quote(key)}: ${rule} (at most ${MAX_NAME_LENGTH} characters)`);
    }
    if (typeof value !== 'string') throw new UsageError(`invalid ${kind} ${quote(key)}: value must be a string`);
  }
}

/** Bytes of UTF-8. */
const bytes = (text: string): number => Buffer.byteLength(text);

/** The entry with the largest value, to name in a "too large" error. */
function largest(entries: Record<string, string>): string {
  const [name = '', value = ''] = Object.entries(entries).sort(([, a], [, b]) => bytes(b) - bytes(a))[0] ?? [];
  return `${quote(name)} (${bytes(value)} bytes)`;
}

/**
 * What cannot be passed to a process as given (argv, environment, path) is
 * refused when staging, not when the run starts: a NUL byte, or a lone
 * surrogate, which Node would pass on as U+FFFD (see utf8.ts).
 */
function refuseUnpassable(what: string, value: string): void {
  if (value.includes('\0')) throw new UsageError(`invalid ${what} ${quote(value)}: contains a NUL character`);
  refuseNotText(what, value);
}

function refuseNotText(what: string, value: string): void {
  if (!isWellFormed(value)) throw new UsageError(`invalid ${what} ${quote(value)}: holds a lone UTF-16 surrogate, which is not text`);
}

function validateCommand(command: string[], shell: boolean): string {
  if (command.some((arg) => typeof arg !== 'string')) throw new UsageError('invalid command: every argument must be a string');
  const first = command[0];
  if (first === undefined) throw new UsageError(`missing command: ${STAGE_USAGE}`);
  if (first.trim() === '') throw new UsageError(`missing command: ${quote(first)} is blank: ${STAGE_USAGE}`);
  command.forEach((arg) => refuseUnpassable('command argument', arg));
  return commandJsonWithinLimit(command, shell);
}

/**
 * The command as stored (JSON), or a UsageError when it exceeds
 * MAX_COMMAND_BYTES, naming its size and argument count. Linear in the
 * command's size, so `fitq stage` checks it before anything else.
 */
export function commandJsonWithinLimit(command: readonly string[], shell: boolean): string {
  const commandJson = JSON.stringify(shell ? [command.join(' ')] : command);
  const size = bytes(commandJson);
  if (size > MAX_COMMAND_BYTES) {
    throw new UsageError(
      `command too large: ${size} bytes of JSON (at most ${MAX_COMMAND_BYTES}), ` +
        `${command.length} argument${command.length === 1 ? '' : 's'} starting with ${quote(command[0] ?? '')}`,
    );
  }
  return commandJson;
}

function validateEnv(env: Record<string, string>): string {
  validateEntries('environment variable', env, ENV_NAME_PATTERN, "use letters, digits and '_', not starting with a digit");
  for (const [name, value] of Object.entries(env)) refuseUnpassable(`environment variable ${quote(name)} value`, value);
  const envJson = JSON.stringify(env);
  if (bytes(envJson) > MAX_ENV_BYTES) {
    throw new UsageError(
      `environment too large: ${bytes(envJson)} bytes of JSON (at most ${MAX_ENV_BYTES}); the largest variable is ${largest(env)}`,
    );
  }
  return envJson;
}

/** Labels as stored (JSON text); UsageError for a bad key or value, or too many or too large labels. */
export function validateLabels(labels: Record<string, string>): string {
  validateEntries('label', labels, LABEL_KEY_PATTERN, "use letters, digits, '.', '_', '/' and '-', starting with a letter or digit");
  for (const [key, value] of Object.entries(labels)) refuseNotText(`label ${quote(key)} value`, value);
  const keys = Object.keys(labels);
  if (keys.length > MAX_LABELS) {
    throw new UsageError(`too many labels: ${keys.length}, the last ${quote(keys[keys.length - 1] ?? '')} (at most ${MAX_LABELS})`);
  }
  const labelsJson = JSON.stringify(labels);
  if (bytes(labelsJson) > MAX_LABELS_BYTES) {
    throw new UsageError(`labels too large: ${bytes(labelsJson)} bytes of JSON (at most ${MAX_LABELS_BYTES}); the largest is ${largest(labels)}`);
  }
  return labelsJson;
}

/** The run's directory, absolute: --cwd (relative to the current directory), or the current directory. */
function validateCwd(cwd: string | undefined): string {
  if (cwd === undefined) return currentDirectory();
  if (typeof cwd !== 'string' || cwd === '') throw new UsageError("--cwd '' is empty: give a directory");
  refuseUnpassable('--cwd', cwd);
  const absolute = isAbsolute(cwd) ? resolve(cwd) : resolve(currentDirectory(), cwd);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    throw new UsageError(`--cwd ${quote(cwd)} does not exist`);
  }
  if (!isDirectory) throw new UsageError(`--cwd ${quote(cwd)} is not a directory`);
  return absolute;
}

/**
 * The current directory, as a path that names it. Node decodes the path as
 * UTF-8, with U+FFFD for bytes that are not, and a run told that path would
 * start elsewhere or not at all: refused, showing the path's bytes (Linux).
 */
function currentDirectory(): string {
  const cwd = process.cwd();
  if (!cwd.includes(REPLACEMENT_CHARACTER) || sameFile(cwd, '.')) return cwd;
  let shown = quote(cwd);
  try {
    shown = quoteBytes(readlinkSync('/proc/self/cwd', { encoding: 'buffer' }));
  } catch {
    // No /proc: the path as Node decoded it.
  }
  throw new UsageError(
    `the current directory ${shown} is not valid UTF-8, and runs are told their directory as UTF-8 text: ` +
      'give --cwd a UTF-8 path to it, such as a symlink',
  );
}

function sameFile(a: string, b: string): boolean {
  try {
    const [first, second] = [statSync(a), statSync(b)];
    return first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}

/**
 * An integer flag from its text, so a value that is not exact as a number
 * (`--priority 99999999999999999999`) is refused quoting what was typed.
 */
export function parseIntegerOption(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^[+-]?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`expected ${flag} to be an integer from ${min} to ${max}, got ${quote(text)}`);
  }
  return value;
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
  const { demands, resources, requires } = demandFields(request.resources);
  const gpus = request.gpus === undefined ? [] : parsePinnedGpus(request.gpus, demands);
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
  Object.assign(fields, timeFields(request.timeLimit, request.timeSignal));
  const timeLimit = fields.timeLimit === undefined ? undefined : Number(fields.timeLimit);
  const lifecycle = lifecycleJson(request);
  if (lifecycle !== undefined) fields.lifecycle = lifecycle;
  const runBytes = bytes(JSON.stringify(fields));
  if (repeat * runBytes > MAX_BATCH_BYTES) {
    throw new UsageError(
      `batch too large: --repeat ${repeat} of ${runBytes} bytes each is ${repeat * runBytes} bytes (at most ${MAX_BATCH_BYTES}): stage fewer or smaller runs`,
    );
  }
  const output = request.output === undefined ? undefined : prepareOutputFiles(request.output, cwd, Object.keys(placeholders));
  return Array.from({ length: repeat }, () => {
    const id = request.runId ?? newRunId();
    return { id, demands, gpus, timeLimit, priority, fields: output ? { ...fields, output: output({ ...placeholders, id }) } : fields };
  });
}

/** A run's priority, checked: an integer within ±MAX_PRIORITY. */
export function validatePriority(priority: number): number {
  if (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY) {
    throw new UsageError(`expected --priority to be an integer within ±${MAX_PRIORITY}, got ${quote(String(priority))}`);
  }
  return priority;
}

/**
 * Demands as a run stores them: exact (`resources`, signed) and as typed
 * (`requires`, for display only, not signed: workers go by `resources`;
 * absent when nothing was typed).
 */
export function demandFields(input: ResourceInput | undefined): { demands: Resources; resources: string; requires?: string } {
  const demands = toResources(input);
  const typed = typedSpecText(input);
  return { demands, resources: formatResources(demands), ...(typed === '' ? {} : { requires: typed }) };
}

/**
 * A run's time limit and time signal as it stores them (ms; `SIG@before`),
 * checked together: a signal needs a limit, and must come after the start.
 */
export function timeFields(limit: number | string | undefined, signal: string | TimeSignal | undefined): { timeLimit?: string; timeSignal?: string } {
  const timeLimit = validateTimeLimit(limit);
  if (signal === undefined) return timeLimit === undefined ? {} : { timeLimit: String(timeLimit) };
  const timeSignal = validateTimeSignal(signal);
  if (timeLimit === undefined) throw new UsageError(`--time-signal ${quote(formatTimeSignal(timeSignal))} needs a --time-limit`);
  if (timeSignal.beforeMs >= timeLimit) {
    throw new UsageError(`--time-signal ${quote(formatTimeSignal(timeSignal))} would come at or before the run's start: its time limit is ${formatTimeLimit(timeLimit)}`);
  }
  return { timeLimit: String(timeLimit), timeSignal: formatTimeSignal(timeSignal) };
}

/** A time limit given to the API (ms, or text as typed), in ms; undefined for none. */
function validateTimeLimit(limit: number | string | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (typeof limit === 'string') return parseTimeLimit('--time-limit', limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TIME_LIMIT_MS) {
    throw new UsageError(`expected --time-limit to be a whole number of ms up to 365 days, got ${quote(String(limit))}`);
  }
  return limit;
}

function validateTimeSignal(timeSignal: string | TimeSignal): TimeSignal {
  if (typeof timeSignal === 'string') return parseTimeSignal('--time-signal', timeSignal);
  if (typeof timeSignal !== 'object' || timeSignal === null) throw new UsageError(`expected --time-signal to be SIGNAL[@TIME], got ${quote(String(timeSignal))}`);
  // Checked as if typed, so the API and the CLI accept the same.
  const before = Number(timeSignal.beforeMs);
  return parseTimeSignal('--time-signal', before === 0 ? String(timeSignal.signal) : `${String(timeSignal.signal)}@${before}ms`);
}

/**
 * A `--gpus` pin must agree with the run's gpu demand, if it has one: a whole
 * gpu=N needs N devices, a fraction shares exactly one.
 */
export function parsePinnedGpus(text: string, demands: Resources): number[] {
  const gpus = parseDeviceList(text, '--gpus');
  const demand = demands.get('gpu');
  if (demand === undefined) return gpus;
  const whole = demand % MICROS_PER_UNIT === 0n;
  const wanted = whole ? Number(demand / MICROS_PER_UNIT) : 1;
  if (gpus.length !== wanted) {
    const asked = `gpu=${formatMicros(demand)}`;
    throw new UsageError(
      `--gpus ${quote(text)} pins ${gpus.length} device${gpus.length === 1 ? '' : 's'} but the run demands ${asked}` +
        (whole ? `: list ${wanted} device${wanted === 1 ? '' : 's'}` : ': a fractional gpu shares exactly one device'),
    );
  }
  return gpus;
}

/**
 * The staged-index shape of some demands: "a=1,b=2", or "none"; a run pinned
 * to GPU devices gets its own shape, "gpu=1;gpus=3", and one with a time
 * limit too, with its ms: "gpu=1;t=600000", "gpu=1;gpus=3;t=600000". The
 * claim then knows each candidate's limit from its shape alone (a worker's
 * --max-time-limit, backfill before a blocked head), and the first run of a
 * shape stands for all its runs, as it must.
 */
export function shapeOf(demands: Resources, gpus: readonly number[] = [], timeLimitMs?: number): string {
  let shape = formatResources(demands, ',') || 'none';
  if (gpus.length > 0) shape += `;gpus=${gpus.join(',')}`;
  if (timeLimitMs !== undefined) shape += `;t=${timeLimitMs}`;
  return shape;
}

/** The staged-index shape of a prepared run. */
export const runShape = (run: Pick<PreparedRun, 'demands' | 'gpus' | 'timeLimit'>): string => shapeOf(run.demands, run.gpus, run.timeLimit);
