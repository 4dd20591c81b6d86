/**
 * The shared secret runs are signed with. The library takes it as an option
 * (`secret`); the CLI finds it in `--secret-file`, else `FITQ_SECRET_FILE`,
 * else `FITQ_SECRET`. Messages say where a secret came from, never what it is.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';

/** A secret as the library takes it: text (used as UTF-8) or raw bytes. */
export type Secret = string | Uint8Array;

/** The secret as HMAC key bytes; undefined when none is given. An empty secret is a UsageError. */
export function secretKey(secret: Secret | undefined | null, source = 'the secret'): Buffer | undefined {
  if (secret === undefined || secret === null) return undefined;
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  if (key.length === 0) throw new UsageError(`${source} is empty`);
  return key;
}

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return (code ?? String((error as Error).message)).split('\n')[0] ?? 'unreadable';
}

/**
 * Reads a secret file: its bytes, less trailing newlines (as `$(cat FILE)`
 * would drop them), so `echo` and editors may add one. UsageError, quoting
 * the path, when it cannot be read or holds nothing else.
 */
export function readSecretFile(path: string, source = '--secret-file'): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read ${source} '${path}': ${describeReadError(error)}`);
  }
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end -= 1;
  if (end === 0) throw new UsageError(`${source} '${path}' is empty`);
  return Buffer.from(bytes.subarray(0, end));
}

/**
 * The CLI's secret: the `--secret-file` flag, else `FITQ_SECRET_FILE`, else
 * `FITQ_SECRET`; undefined when none is set. A variable that is set but empty
 * is a UsageError, not "no secret", so a blank value cannot turn checking off.
 */
export function cliSecret(secretFile: string | undefined, env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  if (secretFile !== undefined) return readSecretFile(secretFile, '--secret-file');
  const file = env.FITQ_SECRET_FILE;
  if (file !== undefined) {
    if (file === '') throw new UsageError('FITQ_SECRET_FILE is set but empty');
    return readSecretFile(file, 'FITQ_SECRET_FILE');
  }
  return secretKey(env.FITQ_SECRET, 'FITQ_SECRET');
}
