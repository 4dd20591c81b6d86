/**
 * `fitq wait` through a Redis restart (appendonly): it reconnects by itself,
 * reads every run again, and exits with the runs' code once they end,
 * including one that ended while Redis was down.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { BIN, newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: RedisServer | undefined;
let client: FitqClient | undefined;
let dir: string | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await server?.dispose();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fitq wait across a Redis restart', () => {
  it('carries on by itself and exits with the runs’ code; a run that ended while Redis was down counts', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    dir = mkdtempSync(join(tmpdir(), 'fitq-wait-restart-'));
    const go = join(dir, 'go');
    const env = { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' };
    const worker = execa('node', [BIN, 'worker', '-r', 'cpu=2', '--name', 'steady', '--log-format', 'json'], { env, reject: false });
    try {
      client = await FitqClient.connect({ redisUrl: server.url, queue });
      // The first ends while Redis is down, the second after it is back.
      const waitGo = (then: string) => ['sh', '-c', `while [ ! -e "$0" ]; do sleep 0.05; done; ${then}`, go];
      const first = (await client.stage({ command: [...waitGo('touch "$0.done"; exit 0')], resources: 'cpu=1' })).runs[0]!.id;
      const second = (await client.stage({ command: [...waitGo('sleep 1; exit 6')], resources: 'cpu=1' })).runs[0]!.id;
      await waitFor('both runs to start', async () => (await client!.listRuns({ statuses: ['running'] })).length === 2);
      const waiter = execa('node', [BIN, 'wait', first, second], { env, reject: false, timeout: 60_000 });
      await waitFor('the waiter to block', async () => /cmd=xread/.test(await client!.redis.client('LIST') as string));
      await client.close();
      client = undefined;

      await server.stop();
      writeFileSync(go, '');
      await waitFor('the first run to end while Redis is down', () => existsSync(`${go}.done`));
      await server.start();

      const result = await waiter;
      expect(result.timedOut, result.stderr).toBe(false);
      expect(result.exitCode, result.stderr).toBe(6);
      expect(result.stderr.split('\n').sort()).toEqual([
        `1 of 2 runs did not complete; the first: run ${second} failed: exit code 6`,
        `run ${first} completed`,
        `run ${second} failed: exit code 6`,
      ].sort());
    } finally {
      worker.kill('SIGTERM');
      await worker;
    }
  });
});
