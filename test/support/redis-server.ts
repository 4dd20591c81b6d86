/**
 * A real redis-server for tests, on a free port, stopped and restarted at will;
 * optionally TLS only (with a throwaway CA and certificates made by openssl)
 * and with ACL users.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../../src/redis/connection.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** PEM files made for a TLS server, all in its data directory. */
export interface TlsFiles {
  /** The CA that signed the server's and the client's certificates. */
  readonly ca: string;
  /** A client certificate signed by `ca`, and its key. */
  readonly cert: string;
  readonly key: string;
  /** Another CA, which signed nothing this server shows: verifying with it fails. */
  readonly otherCa: string;
}

export interface RedisServerOptions {
  /** Keep data across restarts. */
  appendonly?: boolean;
  /**
   * Serve TLS only (the plain port is off) with certificates made at start.
   * `authClients`: whether clients must show a certificate signed by the CA
   * (`yes`), may (`optional`, the default) or need not (`no`).
   */
  tls?: boolean | { authClients?: 'yes' | 'optional' | 'no' };
  /**
   * ACL users besides `default`, which stays on with no password and every
   * permission: name -> rules separated by spaces, e.g.
   * `{ alice: 'on >secret ~fitq:* &fitq:* +@all' }`.
   */
  users?: Record<string, string>;
  /** Further configuration directives, e.g. `{ 'maxmemory-policy': 'allkeys-lru' }`. */
  config?: Record<string, string>;
}

export interface RedisServer {
  /** `redis://127.0.0.1:PORT`, or `rediss://…` for a TLS server. */
  readonly url: string;
  readonly port: number;
  /** The certificates of a TLS server. */
  readonly tls: TlsFiles | undefined;
  /** `url` with a user name and password (URL-encoded). */
  urlFor(user: string, password: string): string;
  /** Stops the server (SIGTERM: with appendonly, it flushes first); its data directory stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it for good and deletes its data directory. */
  dispose(): Promise<void>;
}

/** Resolves once the redis-server just spawned as `child` answers PING on `port` (15 s at most); says why it did not. */
export async function waitForPing(port: number, child: ChildProcess, output: () => string, tls?: RedisOptions['tls']): Promise<void> {
  const deadline = Date.now() + 15_000;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  while (Date.now() < deadline) {
    if (spawnError) {
      throw new Error(`cannot start redis-server (${spawnError.message}): install it, e.g. apt-get install redis-server`);
    }
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with code ${child.exitCode}:\n${output()}`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, tls });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    } finally {
      probe.disconnect();
    }
  }
  throw new Error(`redis-server on port ${port} did not answer within 15 s:\n${output()}`);
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    throw new Error(`openssl ${args[0]} failed: ${(error as Error).message}\n${stderr}`);
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Makes a self-signed CA `<name>.crt`/`<name>.key` in dir. */
function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=fitq test ${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** Makes `<name>.crt`/`<name>.key` signed by ca.crt, with the given extensions. */
function makeLeaf(dir: string, name: string, subject: string, extensions: string[]): void {
  openssl(dir, ['req', '-new', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  writeFileSync(join(dir, `${name}.ext`), `${['basicConstraints=CA:FALSE', ...extensions].join('\n')}\n`);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${randomBytes(8).toString('hex')}`,
    '-days', '2', '-out', `${name}.crt`, '-extfile', `${name}.ext`,
  ]);
}

/** A throwaway CA, a server certificate for 127.0.0.1/localhost, a client certificate, and an unrelated CA. */
function makeCertificates(dir: string): TlsFiles {
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  makeLeaf(dir, 'server', '/CN=127.0.0.1', ['subjectAltName=IP:127.0.0.1,DNS:localhost', 'extendedKeyUsage=serverAuth']);
  makeLeaf(dir, 'client', '/CN=fitq test client', ['extendedKeyUsage=clientAuth']);
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'client.crt'), key: join(dir, 'client.key'), otherCa: join(dir, 'other-ca.crt') };
}

/**
 * Starts redis-server on a free port; `appendonly` keeps data across
 * restarts, `tls` serves TLS only, `users` adds ACL users, `config` sets
 * further directives.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'fitq-redis-'));
  const tls = options.tls ? makeCertificates(dir) : undefined;
  const authClients = typeof options.tls === 'object' ? (options.tls.authClients ?? 'optional') : 'optional';
  const args = ['--bind', '127.0.0.1', '--save', '', '--appendonly', options.appendonly ? 'yes' : 'no', '--dir', dir];
  if (tls) {
    args.push('--port', '0', '--tls-port', String(port), '--tls-auth-clients', authClients);
    args.push('--tls-cert-file', join(dir, 'server.crt'), '--tls-key-file', join(dir, 'server.key'), '--tls-ca-cert-file', tls.ca);
  } else {
    args.push('--port', String(port));
  }
  for (const [directive, value] of Object.entries(options.config ?? {})) args.push(`--${directive}`, value);
  for (const [user, rules] of Object.entries(options.users ?? {})) {
    args.push('--user', user, ...rules.split(/\s+/).filter(Boolean));
  }
  // The readiness probe shows the client certificate, which any authClients setting accepts.
  const probeTls = tls && { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) };
  const scheme = tls ? 'rediss' : 'redis';
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    tls,
    urlFor: (user, password) => `${scheme}://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    async start() {
      // Its output, the last of it kept, says why it did not start (e.g. a bad ACL rule).
      let log = '';
      const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000));
      child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      await waitForPing(port, child, () => log, probeTls);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGTERM');
      });
    },
    async dispose() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.dispose();
    throw error;
  }
  return server;
}

/** The memory Redis says it uses (INFO memory, used_memory), in bytes. */
export async function usedMemory(redis: RedisConnection): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1]);
}

/**
 * Puts the Redis at `url` out of memory for real: maxmemory at half the
 * memory it uses (well below, so the swings of client buffers never lift it;
 * with noeviction it then refuses writes), checked with a write it refuses.
 * Returns a function that lifts the limit again.
 */
export async function fillUp(url: string): Promise<() => Promise<void>> {
  const redis = new Redis(url);
  try {
    const used = await usedMemory(redis);
    await redis.config('SET', 'maxmemory', String(Math.floor(used / 2)));
    const refused = await redis.set('fitq-test:probe', '1').then(() => undefined, (error: Error) => error.message);
    if (!refused?.startsWith('OOM')) throw new Error(`Redis at ${url} still takes writes below its maxmemory (${refused ?? 'SET done'})`);
  } finally {
    redis.disconnect();
  }
  return async () => {
    const lifter = new Redis(url);
    try {
      await lifter.config('SET', 'maxmemory', '0');
    } finally {
      lifter.disconnect();
    }
  };
}
