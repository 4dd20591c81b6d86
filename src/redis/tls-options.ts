/**
 * TLS for Redis connections: the CA that signed the server's certificate and,
 * for servers that require one, a client certificate and its key, each a PEM
 * file named by a flag or FITQ_REDIS_CA / FITQ_REDIS_CERT / FITQ_REDIS_KEY.
 * They apply to `rediss://` URLs; the result goes into
 * ConnectionOptions.redisOptions, so every connection fitq opens uses it.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { RedisOptions } from 'ioredis';
import { UsageError } from '../errors.js';
import { resolveRedisUrl } from './connection.js';
import { opensslReason } from './connect-failure.js';
import { isTlsUrl, redactRedisUrl } from './redis-url.js';

/** Paths of PEM files; unset ones fall back to the environment. */
export interface TlsFiles {
  /** CA certificate(s) to verify the server with; default: Node's trusted CAs. */
  ca?: string | undefined;
  /** Client certificate, for servers that require one (`tls-auth-clients yes`). */
  cert?: string | undefined;
  /** Private key of the client certificate. */
  key?: string | undefined;
}

type TlsFile = keyof TlsFiles;

const SOURCES: Record<TlsFile, { flag: string; env: string }> = {
  ca: { flag: '--redis-ca', env: 'FITQ_REDIS_CA' },
  cert: { flag: '--redis-cert', env: 'FITQ_REDIS_CERT' },
  key: { flag: '--redis-key', env: 'FITQ_REDIS_KEY' },
};

interface Chosen {
  file: TlsFile;
  path: string;
  /** The flag or variable it came from, for messages. */
  source: string;
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
};

function read({ path, source }: Chosen): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const reason = READ_ERRORS[code] ?? (error as Error).message.split('\n')[0];
    throw new UsageError(`cannot read ${source} file '${path}': ${reason}`);
  }
}

/**
 * The ioredis options for the given URL (flag value or the usual fallbacks):
 * `{ tls: { ca, cert, key } }` for a `rediss://` URL, `{}` otherwise. Throws
 * UsageError, naming the flag or variable, when TLS files are given for a
 * plain `redis://` URL, only one of cert and key is given, or a file cannot
 * be read or is not a certificate or key.
 */
export function resolveTlsOptions(redisUrl: string | undefined, files: TlsFiles = {}, env: NodeJS.ProcessEnv = process.env): RedisOptions {
  const url = resolveRedisUrl(redisUrl, env);
  const chosen: Chosen[] = [];
  for (const file of Object.keys(SOURCES) as TlsFile[]) {
    const { flag, env: name } = SOURCES[file];
    if (files[file]) chosen.push({ file, path: files[file], source: flag });
    else if (env[name]) chosen.push({ file, path: env[name], source: name });
  }
  if (!isTlsUrl(url)) {
    if (chosen.length > 0) {
      throw new UsageError(`${chosen[0]!.source} is for TLS and needs a rediss:// URL, but the Redis URL is ${redactRedisUrl(url)}`);
    }
    return {};
  }
  const cert = chosen.find((c) => c.file === 'cert');
  const key = chosen.find((c) => c.file === 'key');
  if (cert && !key) throw new UsageError(`${cert.source} needs the client certificate's key too (--redis-key or FITQ_REDIS_KEY)`);
  if (key && !cert) throw new UsageError(`${key.source} needs the client certificate too (--redis-cert or FITQ_REDIS_CERT)`);

  const tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const c of chosen) {
    const pem = read(c);
    if (c.file === 'ca' && !pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new UsageError(`${c.source} file '${c.path}' holds no PEM certificate`);
    }
    tls[c.file] = pem;
  }
  try {
    // Catches a malformed certificate or key, or a key that does not match, before connecting.
    createSecureContext(tls);
  } catch (error) {
    const reason = opensslReason((error as Error).message).replace(/^no start line$/, 'not a PEM certificate or key (no start line)');
    throw new UsageError(`invalid TLS files (${chosen.map((c) => `${c.source} '${c.path}'`).join(', ')}): ${reason}`);
  }
  return { tls };
}
