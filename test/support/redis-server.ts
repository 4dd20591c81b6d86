/**
 * A real redis-server for tests, on a free port, stopped and restarted at will.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

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

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM: with appendonly, it flushes first); its data directory stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it for good and deletes its data directory. */
  dispose(): Promise<void>;
}

async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  while (Date.now() < deadline) {
    if (spawnError) {
      throw new Error(`cannot start redis-server (${spawnError.message}): install it, e.g. apt-get install redis-server`);
    }
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
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
  throw new Error(`redis-server on port ${port} did not answer within 10 s`);
}

/** Starts redis-server on a free port; `appendonly` keeps data across restarts. */
export async function startRedisServer(options: { appendonly?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'fitq-redis-'));
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', options.appendonly ? 'yes' : 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      await waitForPing(port, child);
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
  await server.start();
  return server;
}
