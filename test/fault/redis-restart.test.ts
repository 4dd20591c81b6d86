/**
 * Redis restarts with persistence (appendonly): nothing acknowledged is lost,
 * and workers and `fitq logs -f` carry on by themselves.
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

const lines = async (client: FitqClient, runId: string) =>
  (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));

describe('a Redis restart with appendonly', () => {
  it('loses no staged run, record or log line; a run that ends while Redis is down is recorded when it is back; logs -f follows through', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const goFile = join(mkdtempSync(join(tmpdir(), 'fitq-restart-')), 'go');
    const env = { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' };
    const worker = execa('node', [BIN, 'worker', '-r', 'cpu=1', '--name', 'steady', '--log-format', 'json'], { env, reject: false });
    try {
      let client = await connect(server.url, queue);
      const waiting = (await client.stage({ command: ['true'], resources: 'gpu=1', repeat: 50 })).runs.map((run) => run.id);
      const done = (await client.stage({ command: ['echo', 'done before'], resources: 'cpu=1' })).runs[0]!.id;
      await client.waitForEnd(done);
      const spanning = (await client.stage({
        // Waits for the go file, prints its last line, and leaves a done file as it exits.
        command: ['sh', '-c', 'echo before; while [ ! -e "$0" ]; do sleep 0.05; done; echo after; touch "$0.done"', goFile],
        resources: 'cpu=1',
      })).runs[0]!.id;
      await waitFor('the first line to be stored', async () => (await lines(client, spanning)).includes('before'));
      const follower = execa('node', [BIN, 'logs', '-f', spanning], { env, reject: false });
      let printed = '';
      follower.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      await waitFor('the follower to print the first line', () => printed === 'before\n');
      const before = await client.redis.hgetall(client.keys.run(done));

      await server.stop();
      // The run ends while Redis is down: it prints its last line and exits.
      writeFileSync(goFile, '');
      await waitFor('the run to end while Redis is down', () => existsSync(`${goFile}.done`));
      await server.start();

      for (const old of clients.splice(0)) await old.close();
      client = await connect(server.url, queue);
      const ended = await client.waitForEnd(spanning);
      expect(ended).toMatchObject({ status: 'completed', exitCode: 0, worker: 'steady' });
      expect(await lines(client, spanning)).toEqual(['before', 'after']);
      const followed = await follower;
      expect(followed.exitCode, followed.stderr).toBe(0);
      expect(followed.stdout).toBe('before\nafter');
      expect(await client.redis.hgetall(client.keys.run(done))).toEqual(before);
      expect(await lines(client, done)).toEqual(['done before']);
      const staged = await client.listRuns({ statuses: ['staged'] });
      expect(staged.map((run) => run.id)).toEqual(waiting);
      expect((await client.listWorkers()).map((w) => w.name)).toEqual(['steady']);
    } finally {
      worker.kill('SIGTERM');
      await worker;
    }
  });
});
