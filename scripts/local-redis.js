// A Redis for the demo and the benchmarks: the one configured in the
// environment, else a throwaway local redis-server on a free port.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export async function answers(url) {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** A TCP port free on 127.0.0.1 now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server on a free port without persistence, with any further
 * `args` (`--replicaof H P`); `stop()` ends it (and so does this process's exit).
 */
export async function throwawayRedis(args = []) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: 'ignore',
  });
  const failed = new Promise((resolve) => child.once('error', resolve));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 400; i++) {
    const error = await Promise.race([failed, new Promise((r) => setTimeout(() => r(undefined), 25))]);
    if (error) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)');
    if (await answers(url)) {
      // Ended with this process too, should it end without stop() (a failure, a closed pipe).
      const kill = () => child.kill();
      process.once('exit', kill);
      return {
        url,
        stop: () => {
          process.removeListener('exit', kill);
          child.kill();
        },
      };
    }
  }
  child.kill();
  throw new Error(`redis-server on port ${port} did not answer`);
}

/**
 * The Redis named by FITQ_REDIS_URL or REDIS_URL, which must answer; without
 * either, a throwaway one (never whatever happens to answer on 6379).
 */
export async function configuredOrThrowawayRedis() {
  const configured = process.env.FITQ_REDIS_URL || process.env.REDIS_URL;
  if (!configured) return { ...(await throwawayRedis()), throwaway: true };
  if (!(await answers(configured))) throw new Error(`the configured Redis (FITQ_REDIS_URL or REDIS_URL) does not answer`);
  return { url: configured, throwaway: false, stop: () => {} };
}
