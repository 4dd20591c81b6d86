/**
 * Validation of the names that become part of Redis keys: queue (namespace),
 * run id and worker name. None may hold spaces, braces or colons, so no key
 * can be forged and every key keeps its namespace's hash tag.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

/** The Lua scripts check names they read from Redis with the same grammar (lua/includes/validName.lua; a test checks they agree). */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const MAX_NAME_LENGTH = 128;

/** Whether a value is a valid queue name, run id or worker name. */
export function isValidName(value: string): boolean {
  return typeof value === 'string' && NAME_PATTERN.test(value) && value.length <= MAX_NAME_LENGTH;
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
