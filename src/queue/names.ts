/**
 * Validation of the names that become part of Redis keys: queue (namespace),
 * run id and worker name. None may hold spaces, braces or colons, so no key
 * can be forged and every key keeps its namespace's hash tag.
 */
import { UsageError } from '../errors.js';
import { utf8Pieces } from './utf8.js';

/** The Lua scripts check names they read from Redis with the same grammar (lua/includes/validName.lua; a test checks they agree). */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const MAX_NAME_LENGTH = 128;

/** Whether a value is a valid queue name, run id or worker name. */
export function isValidName(value: string): boolean {
  return typeof value === 'string' && NAME_PATTERN.test(value) && value.length <= MAX_NAME_LENGTH;
}

/** Values longer than this are shown cut, with their length. */
const MAX_QUOTED_LENGTH = 200;

/**
 * A value as error messages show it: in single quotes, on one line (control
 * characters escaped, like \n, \x1b or \u202e), and cut after 200 characters.
 */
export function quote(value: string): string {
  let shown = value;
  let suffix = '';
  if (value.length > MAX_QUOTED_LENGTH) {
    // Never cut a surrogate pair in two.
    const end = /[\uD800-\uDBFF]/.test(value.charAt(MAX_QUOTED_LENGTH - 1)) ? MAX_QUOTED_LENGTH - 1 : MAX_QUOTED_LENGTH;
    shown = `${value.slice(0, end)}…`;
    suffix = ` (${value.length} characters)`;
  }
  return `'${oneLine(shown)}'${suffix}`;
}

/**
 * Bytes as error messages show them: like quote(), with each byte that is not
 * part of UTF-8 as \xNN (`'caf\xe9.txt'`).
 */
export function quoteBytes(bytes: Uint8Array): string {
  let shown = '';
  for (const piece of utf8Pieces(bytes)) {
    // Cut between pieces, never inside an escape.
    if (shown.length >= MAX_QUOTED_LENGTH) return `'${shown}…' (${bytes.length} bytes)`;
    shown += typeof piece === 'number' ? escapeByte(piece) : escapeChar(piece);
  }
  return `'${shown}'`;
}

const escapeByte = (byte: number): string => `\\x${byte.toString(16).padStart(2, '0')}`;

/**
 * The value with control characters escaped (\n, \x1b, \u202e...), so it
 * prints on one line, cannot drive a terminal and cannot reorder the text
 * around it.
 */
export function oneLine(value: string): string {
  return Array.from(value, escapeChar).join('');
}

/**
 * Control characters (C0, DEL, C1) and the Unicode line separators would
 * break the line; the bidirectional controls (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069) would make it display in another order than
 * it reads, e.g. a command shown reversed after U+202E.
 */
function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function escapeChar(char: string): string {
  // A lone surrogate (Array.from keeps a pair in one string) would print as U+FFFD.
  const lone = char.length === 1 && char.charCodeAt(0) >= 0xd800 && char.charCodeAt(0) <= 0xdfff;
  if (!lone && !isUnsafe(char.charCodeAt(0))) return char;
  switch (char) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    default: {
      const code = char.charCodeAt(0);
      return code <= 0xff ? escapeByte(code) : `\\u${code.toString(16).padStart(4, '0')}`;
    }
  }
}

function validateName(kind: string, value: string): string {
  if (!isValidName(value)) {
    throw new UsageError(
      `invalid ${kind} ${quote(String(value))}: use letters, digits, '.', '_' and '-', starting with a letter or digit (at most ${MAX_NAME_LENGTH} characters)`,
    );
  }
  return value;
}

export const validateQueueName = (value: string): string => validateName('queue name', value);
export const validateKeyPrefix = (value: string): string => validateName('key prefix (FITQ_PREFIX)', value);
export const validateRunId = (value: string): string => validateName('run id', value);
export const validateWorkerName = (value: string): string => validateName('worker name', value);

/**
 * The key names of the run queue's own BullMQ keys (`runs:meta`, ...): a run
 * is the job `runs:<id>`, so its id must not be one of them. test/contract
 * checks this list against BullMQ's.
 */
export const QUEUE_KEY_NAMES: readonly string[] = [
  'active', 'wait', 'waiting-children', 'paused', 'id', 'delayed', 'prioritized', 'stalled-check',
  'completed', 'failed', 'stalled', 'repeat', 'limiter', 'meta', 'events', 'pc', 'marker', 'de',
];

/**
 * A run id chosen for a new run (`--run-id`): a valid name that is neither
 * a number (BullMQ numbers the jobs it adds itself) nor one of the queue's
 * key names.
 */
export function validateNewRunId(value: string): string {
  validateRunId(value);
  if (/^[0-9]+$/.test(value)) {
    throw new UsageError(`invalid run id ${quote(value)}: it must not be a number only (add a letter)`);
  }
  if (QUEUE_KEY_NAMES.includes(value)) {
    throw new UsageError(`invalid run id ${quote(value)}: '${value}' names a key of the run queue; choose another`);
  }
  return value;
}
