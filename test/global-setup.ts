import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

let server: RedisServer | undefined;

/** Commands slower than this on the shared Redis are printed at the end: one blocks every test file meanwhile. */
const SLOW_US = 1_000_000;

export async function setup(project: TestProject): Promise<void> {
  server = await startRedisServer({ config: { 'slowlog-log-slower-than': String(SLOW_US), 'slowlog-max-len': '128' } });
  project.provide('redisUrl', server.url);
}

export async function teardown(): Promise<void> {
  if (server) await printSlowCommands(server.url).catch(() => undefined);
  await server?.dispose();
}

async function printSlowCommands(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    const entries = (await redis.call('SLOWLOG', 'GET', '128')) as [number, number, number, string[]][];
    for (const [, at, micros, args] of entries.reverse()) {
      process.stderr.write(`shared Redis: ${args.slice(0, 2).join(' ')} took ${(micros / 1e6).toFixed(1)}s at ${new Date(at * 1000).toISOString()}\n`);
    }
  } finally {
    redis.disconnect();
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
