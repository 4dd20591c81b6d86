/**
 * Chaos: six CLI workers and 300 runs of mixed shapes (GPU devices, fractions,
 * a cluster-wide pool, pinned devices), while workers are killed with SIGKILL
 * and restarted under the same name, and Redis (appendonly) is restarted.
 *
 * Every run process appends its own start and end to a file, so the checks
 * rest on what really ran, not on what fitq recorded: no run ran more often
 * than it was re-staged, and at no instant did the processes on one worker
 * use more than its capacity or a device's worth, nor all of them more than
 * the pool or their user's quota.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { parseResourceSpec, type Resources } from '../../src/resources/spec.js';
import { stagerOf } from '../../src/model/stager.js';
import { BIN, newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

interface WorkerSpec {
  name: string;
  args: string[];
  capacity: Resources;
  devices: string[];
}

const WORKERS: WorkerSpec[] = [
  ...['w0', 'w1'].map((name) => ({ name, args: ['-r', 'cpu=2 mem=4G', '--gpus', '0,1'], capacity: parseResourceSpec('cpu=2 mem=4G gpu=2'), devices: ['0', '1'] })),
  ...['w2', 'w3'].map((name) => ({ name, args: ['-r', 'cpu=4 mem=8G'], capacity: parseResourceSpec('cpu=4 mem=8G'), devices: [] })),
  ...['w4', 'w5'].map((name) => ({ name, args: ['-r', 'cpu=2', '--gpus', '0'], capacity: parseResourceSpec('cpu=2 gpu=1'), devices: ['0'] })),
];
const POOL = 2_000_000n; // license=2
/** The quota of the user staging every run: runs at once, and gpu. */
const QUOTA = { running: 10_000_000n, gpu: 3_000_000n };

/** Shapes and how many runs of each (300 in all). */
const SHAPES: { resources: string; gpus?: string; count: number }[] = [
  { resources: 'cpu=1', count: 60 },
  { resources: 'cpu=1 mem=1G', count: 50 },
  { resources: 'gpu=1', count: 45 },
  { resources: 'gpu=0.5', count: 40 },
  { resources: 'gpu=2', count: 15 },
  { resources: 'license=1 cpu=1', count: 40 },
  { resources: 'cpu=1 mem=3G', count: 30 },
  { resources: 'gpu=1', gpus: '1', count: 20 },
];

/** A deterministic sequence, so a failure can be replayed in kind if not in timing. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const dir = mkdtempSync(join(tmpdir(), 'fitq-chaos-'));
const ledger = join(dir, 'ledger');
let server: RedisServer | undefined;
const processes = new Map<string, ResultPromise>();
/** The current client (replaced after each Redis restart), closed after the test. */
const clients: (() => FitqClient)[] = [];

afterEach(async () => {
  for (const current of clients.splice(0)) await current().close();
});

afterAll(async () => {
  for (const child of processes.values()) child.kill('SIGKILL');
  await Promise.allSettled([...processes.values()]);
  await server?.dispose();
  if (!process.env.FITQ_KEEP_CHAOS) rmSync(dir, { recursive: true, force: true });
});

/** The run: record start (pid, worker, devices) and end in the ledger, also when terminated. */
function runCommand(seconds: number): string[] {
  const line = (kind: string) => `echo "${kind} $FITQ_RUN_ID $$ $FITQ_WORKER \${CUDA_VISIBLE_DEVICES:-} $(date +%s%3N)" >> '${ledger}'`;
  // The traps come first, so a process that recorded its start records its end,
  // whatever signal its worker's death brings (the watchdog's TERM, or a broken pipe).
  const onSignal = `'${line('E').replace(/'/g, `'\\''`)}; exit 143'`;
  return ['sh', '-c', `trap ${onSignal} TERM HUP PIPE INT; ${line('S')}; sleep ${seconds} & wait $!; ${line('E')}`];
}

interface Execution {
  runId: string;
  worker: string;
  devices: string[];
  start: number;
  end: number;
}

function readExecutions(endOfTest: number): Execution[] {
  const open = new Map<string, Execution>();
  const done: Execution[] = [];
  for (const entry of readFileSync(ledger, 'utf8').split('\n').filter(Boolean)) {
    const [kind, runId = '', pid = '', worker = '', ...rest] = entry.split(' ');
    const at = Number(rest.at(-1));
    const key = `${runId}/${pid}`;
    if (kind === 'S') open.set(key, { runId, worker, devices: rest.length > 1 ? rest[0]!.split(',') : [], start: at, end: endOfTest });
    else {
      const execution = open.get(key);
      if (execution) done.push({ ...execution, end: at });
      open.delete(key);
    }
  }
  // A start without an end: the process outlived the test's view; count it as running to the end.
  return [...done, ...open.values()];
}

/** Peak of summed amounts over time for intervals; fails when any instant exceeds `limit`. */
function checkSweep(label: string, items: { start: number; end: number; amount: bigint; what?: string }[], limit: bigint): void {
  const events = items.flatMap((item) => [
    { at: item.start, delta: item.amount },
    { at: item.end, delta: -item.amount },
  ]);
  const active = (at: number) =>
    items.filter((item) => item.amount > 0n && item.start <= at && item.end > at).map((item) => `${item.what} ${item.start}-${item.end} ${item.amount}`);
  // Ends before starts at the same millisecond: a release then a reservation.
  events.sort((a, b) => a.at - b.at || (a.delta < b.delta ? -1 : 1));
  let current = 0n;
  for (const event of events) {
    current += event.delta;
    if (current > limit) expect.fail(`${label} at ${event.at}: ${current} > ${limit}; running: ${active(event.at).join('; ')}`);
  }
}

function startWorker(queue: string, spec: WorkerSpec): void {
  const child = execa('node', [BIN, 'worker', ...spec.args, '--name', spec.name, '--concurrency', '4', '--lease', '5', '--kill-grace', '1', '--log-format', 'json'], {
    env: { FITQ_REDIS_URL: server!.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: ['pipe'],
    reject: false,
  });
  processes.set(spec.name, child);
}

describe('chaos', () => {
  it('300 runs on 6 workers survive SIGKILLed workers and Redis restarts: every run ends with a reason, none runs twice unless re-staged, nothing is oversubscribed', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    appendFileSync(ledger, '');
    const rand = random(20261122);
    const connect = () => FitqClient.connect({ redisUrl: server!.url, queue });
    let client = await connect();
    clients.push(() => client);
    await client.setPool('license=2');
    const user = stagerOf().user;
    await client.setQuota({ user }, ['running=10', 'gpu=3']);
    for (const spec of WORKERS) startWorker(queue, spec);
    await waitFor('all workers to register', async () => (await client.listWorkers()).length === WORKERS.length);

    // Three waves of runs; most may be re-staged up to 5 times, some not at all.
    const requests = SHAPES.flatMap((shape) =>
      Array.from({ length: shape.count }, (_, i) => ({
        command: runCommand(0.1 + Math.round(rand() * 40) / 100),
        resources: shape.resources,
        ...(shape.gpus ? { gpus: shape.gpus } : {}),
        retries: i % 6 === 0 ? 0 : 5,
      })),
    ).sort(() => rand() - 0.5);
    const runIds: string[] = [];
    const stageWave = async (wave: number) => {
      const { runs } = await client.stage(requests.slice(wave * 100, wave * 100 + 100));
      runIds.push(...runs.map((run) => run.id));
    };

    let killed = 0;
    let redisRestarts = 0;
    for (let round = 0; round < 6; round++) {
      if (round % 2 === 0) await stageWave(round / 2);
      // Let runs get going, then strike.
      await waitFor('some run to be running', async () => (await client.listRuns({ statuses: ['running'] })).length > 0);
      const victims = [...WORKERS].sort(() => rand() - 0.5).slice(0, 1 + Math.floor(rand() * 2));
      for (const victim of victims) {
        appendFileSync(ledger, `K - - ${victim.name} - ${Date.now()}\n`);
        processes.get(victim.name)!.kill('SIGKILL');
        await processes.get(victim.name);
        killed += 1;
      }
      if (round % 2 === 1) {
        await client.close();
        appendFileSync(ledger, `R - - - - ${Date.now()}\n`);
        await server.stop();
        await new Promise((resolve) => setTimeout(resolve, 200 + rand() * 400)); // the outage
        await server.start();
        client = await connect();
        redisRestarts += 1;
      }
      // A killed worker comes back under its name once its lease has run out.
      await waitFor('the killed workers to be reaped', async () => {
        const live = new Set((await client.listWorkers()).map((worker) => worker.name));
        return victims.every((victim) => !live.has(victim.name));
      }, 20_000, 100);
      for (const victim of victims) startWorker(queue, victim);
    }
    expect(killed).toBeGreaterThanOrEqual(6);
    expect(redisRestarts).toBe(3);

    const finals = await waitFor('every run to end', async () => {
      const runs = await client.listRuns();
      return runs.length === 300 && runs.every((run) => ['completed', 'failed', 'lost'].includes(run.status)) ? runs : undefined;
    }, 90_000, 250);
    const endOfTest = Date.now();
    const byId = new Map<string, RunRecord>(finals.map((run) => [run.id, run]));
    expect(new Set(runIds)).toEqual(new Set(byId.keys()));

    // Every run ended with a reason: completed (exit 0), or failed/lost with why.
    for (const run of finals) {
      if (run.status === 'completed') expect(run.exitCode).toBe(0);
      else expect(run.reason, `run ${run.id} ${run.status}`).toBeTruthy();
      if (run.status === 'lost') expect(run.restaged ?? 0).toBe(run.retries ?? 0);
    }
    const completed = finals.filter((run) => run.status === 'completed').length;
    expect(completed).toBeGreaterThan(240);
    expect(finals.some((run) => (run.restaged ?? 0) > 0 && run.status === 'completed')).toBe(true);

    // What really ran: never more often than re-staged allowed, and within every limit.
    const executions = readExecutions(endOfTest);
    const perRun = new Map<string, number>();
    for (const execution of executions) perRun.set(execution.runId, (perRun.get(execution.runId) ?? 0) + 1);
    for (const [runId, count] of perRun) expect(count, `executions of ${runId}`).toBeLessThanOrEqual(1 + (byId.get(runId)!.restaged ?? 0));
    for (const run of finals.filter((r) => r.status === 'completed')) expect(perRun.get(run.id) ?? 0).toBeGreaterThanOrEqual(1);

    const demandOf = (execution: Execution) => parseResourceSpec(byId.get(execution.runId)!.requires);
    for (const spec of WORKERS) {
      const mine = executions.filter((execution) => execution.worker === spec.name);
      for (const [resource, capacity] of spec.capacity) {
        const items = mine.map((e) => ({ start: e.start, end: e.end, amount: demandOf(e).get(resource) ?? 0n, what: `${e.runId}/${e.worker}` }));
        checkSweep(`${spec.name} ${resource}`, items, capacity);
      }
      for (const device of spec.devices) {
        const items = mine
          .filter((e) => e.devices.includes(device))
          .map((e) => {
            const gpu = demandOf(e).get('gpu') ?? 1_000_000n;
            return { start: e.start, end: e.end, amount: gpu < 1_000_000n ? gpu : 1_000_000n };
          });
        checkSweep(`${spec.name} device ${device}`, items, 1_000_000n);
      }
    }
    checkSweep('pool license', executions.map((e) => ({ start: e.start, end: e.end, amount: demandOf(e).get('license') ?? 0n })), POOL);
    checkSweep('quota running', executions.map((e) => ({ start: e.start, end: e.end, amount: 1_000_000n, what: `${e.runId}/${e.worker}` })), QUOTA.running);
    checkSweep('quota gpu', executions.map((e) => ({ start: e.start, end: e.end, amount: demandOf(e).get('gpu') ?? 0n, what: `${e.runId}/${e.worker}` })), QUOTA.gpu);

    // Everything reserved came back.
    for (const worker of await client.listWorkers()) expect(worker.free).toEqual(worker.capacity);
    expect(await client.listPool()).toEqual([{ name: 'license', capacity: POOL, used: 0n }]);
    expect(await client.redis.exists(client.keys.userUsage(user))).toBe(0);
  }, 170_000);
});
