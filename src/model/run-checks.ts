/**
 * The checks staging makes of a run, each once, at the edge, quoting the
 * bad value: its command, environment, labels, directory, priority,
 * demands, pinned GPUs and time limit. `fitq update` edits runs with the
 * same checks (run-edits.ts).
 */
import { readlinkSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { projectOf } from './project.js';
import { UsageError } from '../errors.js';
import { formatHumanAmount, formatMicros, MICROS_PER_UNIT } from '../resources/amount.js';
import { parseDeviceList } from '../resources/devices.js';
import { formatResources, toDemands, type Demands, type ResourceInput, type Resources } from '../resources/spec.js';
import { quote, quoteBytes } from '../text/quote.js';
import { isWellFormed, REPLACEMENT_CHARACTER } from '../text/utf8.js';
import { formatTimeLimit, formatTimeSignal, MAX_TIME_LIMIT_MS, parseTimeLimit, parseTimeSignal, type TimeSignal } from '../units/duration.js';
import { MAX_NAME_LENGTH } from './names.js';
import { formatDemands } from './run-decode.js';

/** How to stage a run, quoted in the errors that say what is missing. */
export const STAGE_USAGE = 'fitq stage [FLAGS] -- COMMAND [ARGS...]';

export const MAX_PRIORITY = 1_000_000;

/** Limits on what one run may carry, in bytes of UTF-8. */
export const MAX_COMMAND_BYTES = 128 * 1024;
export const MAX_ENV_BYTES = 128 * 1024;

/** Labels of one run: at most this many, with keys of at most 128 characters, and this many bytes of JSON in all. */
export const MAX_LABELS = 100;
export const MAX_LABELS_BYTES = 64 * 1024;

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;

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

/** The command as stored (JSON); UsageError for a missing, blank or unpassable one, or one too large. */
export function validateCommand(command: string[], shell: boolean): string {
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

/** The environment as stored (JSON text); UsageError for a bad name or value, or too large an environment. */
export function validateEnv(env: Record<string, string>): string {
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
  // A project is part of the run's shape: a name.
  projectOf(labels);
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
export function validateCwd(cwd: string | undefined): string {
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
 * absent when nothing was typed, or when it reads exactly as the amounts
 * are shown without it, "cpu=1": two copies of it in every run's job hash
 * would say nothing more); and as given, parsed here once (Demands given
 * are parsed already).
 */
export function demandFields(input: ResourceInput | undefined): { demands: Resources; given: Demands; resources: string; requires?: string } {
  const given = toDemands(input);
  const { amounts: demands, typed } = given;
  const shown = typed === '' || typed === formatDemands(demands);
  return { demands, given, resources: formatResources(demands), ...(shown ? {} : { requires: typed }) };
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
 * `gpumem` is memory per GPU device (a worker's probe measures each
 * device's): a run demanding it needs devices, by a gpu demand or a pin.
 */
export function checkGpuMemory(demands: Resources, pinned: readonly number[]): void {
  const memory = demands.get('gpumem');
  if (memory === undefined || demands.has('gpu') || pinned.length > 0) return;
  throw new UsageError(`gpumem=${formatHumanAmount(memory)} is memory on each GPU device the run gets: demand gpu too (gpu=1 gpumem=${formatHumanAmount(memory)}), or pin devices with --gpus`);
}
