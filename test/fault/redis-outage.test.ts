/**
 * Redis going away under a live worker, with real redis-servers stopped and
 * restarted on their AOF: the worker says once that Redis is unreachable and
 * once that it is back; an outage longer than the lease fences it, so what
 * it still tries to write for its runs is refused, and those runs end lost
 * (or are re-staged, per their retries), never failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { newQueue, startTestWorker } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: RedisServer | undefined;
const clients: FitqClient[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.dispose();
  server = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function connect(url: string, queue: string): Promise<FitqClient> {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  clients.push(client);
  return client;
}

const lines = async (client: FitqClient, runId: string) =>
  (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));

/** Keeps Redis down for `ms` (time is what is tested here), then starts it again on its AOF. */
async function outage(redis: RedisServer, ms: number): Promise<void> {
  await redis.stop();
  const stoppedAt = Date.now();
  await waitFor(`${ms} ms of outage`, () => Date.now() - stoppedAt >= ms, ms + 5000, 100);
  await redis.start();
}

const unreachable = /^Redis unreachable \(.*ECONNREFUSED.*\), retrying$/;
const reconnected = /^Redis reconnected after (\d+\.\d)s$/;

describe('a worker that loses Redis', () => {
  it('logs once that Redis is unreachable and once that it is back, nothing else meanwhile, and carries on', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const client = await connect(server.url, queue);
    const { worker, logs } = await startTestWorker(queue, { redisUrl: server.url, name: 'steady', resources: 'cpu=1' });
    const runId = (await client.stage({ command: ['sleep', '4'], resources: 'cpu=1' })).runs[0]!.id;
    await waitFor('the run to start', () => logs.some((entry) => entry.msg === `Run ${runId} started`));
    const before = logs.length;

    // Several reconnect attempts and heartbeats fail meanwhile (the lease, 30 s, does not run out).
    await outage(server, 2500);
    await waitFor('the worker to say Redis is back', () => logs.some((entry) => reconnected.test(String(entry.msg))));
    const during = logs.slice(before).map((entry) => ({ level: entry.level, msg: String(entry.msg) }));
    expect(during.filter((entry) => unreachable.test(entry.msg)), JSON.stringify(during)).toEqual([{ level: 40, msg: expect.any(String) }]);
    expect(during.filter((entry) => reconnected.test(entry.msg))).toEqual([{ level: 30, msg: expect.any(String) }]);
    const seconds = Number(reconnected.exec(during.find((entry) => reconnected.test(entry.msg))!.msg)![1]);
    expect(seconds).toBeGreaterThanOrEqual(2.5);
    expect(seconds).toBeLessThan(20);
    // Nothing else above info level, and the worker goes on as it was.
    expect(during.filter((entry) => Number(entry.level) >= 40 && !unreachable.test(entry.msg))).toEqual([]);
    const fresh = await connect(server.url, queue);
    expect(await fresh.waitForEnd(runId)).toMatchObject({ status: 'completed', worker: 'steady', epoch: 1 });
    expect(logs.map((entry) => String(entry.msg)).join('\n')).not.toMatch(/lost its registration/);
    await worker.stop();
  });
});

describe('an outage longer than the lease', () => {
  it('fences the worker: its late output and ends are refused, its runs end lost or are re-staged per --retries, never failed', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    let client = await connect(server.url, queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-outage-'));
    dirs.push(dir);
    // The first attempt prints, then waits; on SIGTERM it prints once more (a late write) and exits.
    const attempt = (marker: string) =>
      `if [ -e '${marker}' ]; then echo "second attempt"; exit 0; fi; touch '${marker}'; ` +
      `trap 'echo "terminated"; exit 143' TERM; echo "first attempt"; sleep 60 & wait`;
    const retried = (await client.stage({ command: ['sh', '-c', attempt(join(dir, 'a'))], resources: 'foo=1', retries: 2 })).runs[0]!.id;
    const plain = (await client.stage({ command: ['sh', '-c', attempt(join(dir, 'b'))], resources: 'foo=1' })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'cut', '--lease', '2', '--kill-grace', '1'], server.url);
    for (const id of [retried, plain]) {
      await waitFor(`run ${id} to print`, async () => (await lines(client, id)).includes('first attempt'));
    }

    await outage(server, 2000 + 1500);
    await worker.waitForMessage(reconnected);
    for (const old of clients.splice(0)) await old.close();
    client = await connect(server.url, queue);

    const lost = await client.waitForEnd(plain);
    expect(lost).toMatchObject({ status: 'lost', reason: 'worker cut stopped renewing its lease', worker: 'cut', epoch: 1 });
    expect(lost.exitCode).toBeUndefined();
    expect(lost.signal).toBeUndefined();
    // Re-staged (one retry used), then run again by the same worker, registered anew.
    const done = await client.waitForEnd(retried);
    expect(done).toMatchObject({ status: 'completed', worker: 'cut', epoch: 2, restaged: 1, retries: 2 });
    expect(done.restagedReason).toBe('worker cut stopped renewing its lease (re-staged 1 of 2)');
    // What the fenced copies printed on SIGTERM never landed.
    expect(await lines(client, plain)).toEqual(['first attempt']);
    expect((await client.readLog(retried)).map((entry) => (entry.kind === 'line' ? entry.line : entry.kind))).toEqual([
      'first attempt',
      'restaged',
      'second attempt',
      'end',
    ]);

    // (Redis records the end before the worker's log line of it reaches the test.)
    await worker.waitForMessage(`Run ${retried} completed`);
    const said = worker.messages();
    expect(said.filter((message) => unreachable.test(message))).toHaveLength(1);
    expect(said).toContain('Worker cut lost its registration (lease expired or Redis lost its data); stopping its runs');
    const notRecorded = 'but its result was not recorded: this worker no longer holds its registration';
    for (const id of [retried, plain]) {
      expect(said).toContainEqual(expect.stringMatching(new RegExp(`^Run ${id} exited 143 ${notRecorded}`)));
      expect(said.filter((message) => message.startsWith(`Run ${id} failed`))).toEqual([]);
    }
    expect(said.filter((message) => message === `Run ${retried} completed`)).toHaveLength(1);
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
  });
});
