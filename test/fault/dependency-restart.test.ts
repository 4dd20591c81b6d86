/**
 * A Redis restart (appendonly) in the middle of a dependency chain: the run
 * that ends while Redis is down is recorded once it is back, and its
 * dependents start then, in order; a held run stays held, a delayed one
 * still waits for its time. A run that fails while Redis is down is retried
 * (--retry-on-failure) once it is back, its first attempt kept.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { BIN, newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: RedisServer | undefined;
const clients: FitqClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.dispose();
  server = undefined;
});

async function connect(url: string, queue: string): Promise<FitqClient> {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  clients.push(client);
  return client;
}

describe('a Redis restart in the middle of a dependency chain', () => {
  it('the dependents of a run that ended while Redis was down start once it is back; parked runs stay parked', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const goFile = join(mkdtempSync(join(tmpdir(), 'fitq-chain-')), 'go');
    const env = { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' };
    const worker = execa('node', [BIN, 'worker', '-r', 'cpu=1', '--name', 'chain', '--log-format', 'json'], { env, reject: false });
    try {
      let client = await connect(server.url, queue);
      await client.stage({
        runId: 'first', resources: 'cpu=1',
        command: ['sh', '-c', 'touch "$0.started"; while [ ! -e "$0" ]; do sleep 0.05; done; touch "$0.done"', goFile],
      });
      await client.stage({ runId: 'second', resources: 'cpu=1', command: ['true'], after: [{ kind: 'ok', ids: ['first'] }] });
      await client.stage({ runId: 'third', resources: 'cpu=1', command: ['true'], after: [{ kind: 'ok', ids: ['second'] }] });
      await client.stage({ runId: 'held', command: ['true'], hold: true, after: [{ kind: 'ok', ids: ['first'] }] });
      await client.stage({ runId: 'later', command: ['true'], delayMs: 3_600_000 });
      // Its process, not only its claim: Redis stops next, and a claim whose reply the worker has not acted on yet would start nothing meanwhile.
      await waitFor('the first run to start', () => existsSync(`${goFile}.started`));

      await server.stop();
      writeFileSync(goFile, '');
      await waitFor('the first run to end while Redis is down', () => existsSync(`${goFile}.done`));
      await server.start();

      for (const old of clients.splice(0)) await old.close();
      client = await connect(server.url, queue);
      expect(await client.waitForEnd('third')).toMatchObject({ status: 'completed' });
      const runs = Object.fromEntries((await client.listRuns()).map((run) => [run.id, run]));
      expect(runs.first!.status).toBe('completed');
      expect(runs.second!.startedAt).toBeGreaterThanOrEqual(runs.first!.endedAt!);
      expect(runs.third!.startedAt).toBeGreaterThanOrEqual(runs.second!.endedAt!);
      expect(runs.held).toMatchObject({ status: 'held', reason: 'held (fitq release held to let it start)' });
      expect(runs.later!.status).toBe('staged');
      expect(runs.later!.reason).toMatch(/^begins at /);
    } finally {
      worker.kill('SIGTERM');
      await worker;
    }
  });

  it('a run that fails while Redis is down is retried once it is back, after its backoff, and its attempts are kept', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const goFile = join(mkdtempSync(join(tmpdir(), 'fitq-retry-')), 'go');
    const env = { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' };
    const worker = execa('node', [BIN, 'worker', '-r', 'cpu=1', '--name', 'retrier', '--log-format', 'json'], { env, reject: false });
    try {
      let client = await connect(server.url, queue);
      // The first attempt waits for the go file, then fails; the second completes at once.
      const script = 'if [ -e "$0.tried" ]; then exit 0; fi; touch "$0.tried"; while [ ! -e "$0" ]; do sleep 0.05; done; touch "$0.failing"; exit 3';
      await client.stage({ runId: 'flaky', resources: 'cpu=1', command: ['sh', '-c', script, goFile], retry: { max: 2, backoffMs: 500 } });
      await waitFor('the first attempt to start', () => existsSync(`${goFile}.tried`));

      await server.stop();
      writeFileSync(goFile, '');
      await waitFor('the first attempt to fail while Redis is down', () => existsSync(`${goFile}.failing`));
      await server.start();

      for (const old of clients.splice(0)) await old.close();
      client = await connect(server.url, queue);
      expect(await client.waitForEnd('flaky')).toMatchObject({ status: 'completed', exitCode: 0, failures: 1 });
      const run = await client.getRun('flaky');
      expect(run.attempts?.map((attempt) => [attempt.status, attempt.exitCode])).toEqual([['failed', 3]]);
      expect(run.startedAt! - run.attempts![0]!.endedAt!).toBeGreaterThanOrEqual(500);
    } finally {
      worker.kill('SIGTERM');
      await worker;
    }
  });
});
