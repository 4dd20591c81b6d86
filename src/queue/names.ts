/**
 * Validation of the names that become part of Redis keys: queue (namespace),
 * run id and worker name. None may hold spaces, braces or colons, so no key
 * can be forged and every key keeps its namespace's hash tag.
 */
import { UsageError } from '../errors.js';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const MAX_NAME_LENGTH = 128;

function validateName(kind: string, value: string): string {
  if (!NAME_PATTERN.test(value) || value.length > MAX_NAME_LENGTH) {
    throw new UsageError(
      `invalid ${kind} '${value}': use letters, digits, '.', '_' and '-', starting with a letter or digit (at most ${MAX_NAME_LENGTH} characters)`,
    );
  }
  return value;
}

export const validateQueueName = (value: string): string => validateName('queue name', value);
export const validateRunId = (value: string): string => validateName('run id', value);
export const validateWorkerName = (value: string): string => validateName('worker name', value);
