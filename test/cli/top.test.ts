/**
 * `fitq top` in a real terminal: tmux runs it in an 80×24 pane, the test
 * reads the pane (capture-pane) and types (send-keys). A real redis-server
 * and a real CLI worker with two GPU devices: the view shows the running
 * run on its device and why a staged run waits, follows a run staged
 * later, says Redis is away while it is and carries on once it is back,
 * and quits on q, exit code 0.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { renderTop } from '../../src/top/render.js';
import type { TopSnapshot } from '../../src/top/snapshot.js';
import type { WorkerRecord } from '../../src/model/worker-record.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker, type CliWorker } from '../support/cli-worker.js';
import { BIN, connectClient, newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const SOCKET = `fitq-top-${process.pid}`;
const tmux = (...args: string[]) => execa('tmux', ['-L', SOCKET, ...args]);
const pane = async () => (await tmux('capture-pane', '-p', '-t', 'top')).stdout;

let server: RedisServer;
let worker: CliWorker;
const queue = newQueue();

beforeAll(async () => {
  server = await startRedisServer({ appendonly: true });
  worker = spawnCliWorker(queue, ['--gpus', '0,1', '-r', 'cpu=4', '--name', 'topw'], server.url);
});

afterAll(async () => {
  await tmux('kill-server').catch(() => undefined);
  worker.process.kill('SIGTERM');
  await worker.exited;
  await server.dispose();
});

/** A client of the test's namespace (closed after the test), once the worker is there. */
async function clientWithWorker(): Promise<FitqClient> {
  const client = await connectClient(queue, server.url);
  await client.waitForWorkers((workers) => workers.some((w) => w.name === 'topw'), 30_000);
  return client;
}

describe('fitq top', () => {
  it('shows workers, devices, runs and why staged runs wait, live, in 80×24; says Redis is away and carries on; q quits', async () => {
    let client = await clientWithWorker();
    const [running] = (await client.stage({ command: ['sleep', '120'], resources: 'gpu=1' })).runs;
    const [tooBig] = (await client.stage({ command: ['true'], resources: 'gpu=4' })).runs;
    await client.waitForWorkers((workers) => workers.some((w) => w.runs.includes(running!.id)), 30_000);

    // Its exit code goes to a file: tmux may not reap a pane's process while vitest is its parent's parent.
    const exitFile = join(mkdtempSync(join(tmpdir(), 'fitq-top-')), 'exit');
    const env = `FITQ_REDIS_URL=${server.url} FITQ_QUEUE=${queue}`;
    await tmux('new-session', '-d', '-s', 'top', '-x', '80', '-y', '24', `${env} node ${BIN} top; echo $? > ${exitFile}; sleep 600`);
    await waitFor('the first frame', async () => (await pane()).includes(tooBig!.id), 30_000);
    const first = await pane();
    const lines = first.split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(lines.every((line) => line.length <= 80)).toBe(true);
    expect(first).toMatch(/^fitq top {2}queue \S+ {2}\d\d:\d\d:\d\d +q quit$/m);
    expect(first).toMatch(/^ {2}topw +active {2}runs 1 /m);
    expect(first).toMatch(/cpu +\[ *0\/4\]/);
    // Its device holds the running run; the other is free.
    expect(first).toContain(`GPU 0:${running!.id.slice(0, 8)}  1:free`);
    expect(first).toMatch(new RegExp(`^ {2}${running!.id} {2}topw +0 +\\S+ {2}sleep 120$`, 'm'));
    expect(first).toMatch(new RegExp(`^ +1 {2}gpu=4 +${tooBig!.id} {2}needs more than any live worker has: gpu=4 > 2$`, 'm'));

    // Staged later: shown from the event, without a key.
    const [later] = (await client.stage({ command: ['true'], resources: 'gpu=3' })).runs;
    await waitFor('the run staged later', async () => (await pane()).includes(later!.id), 15_000);

    // Redis away: said above what was read; back: read again.
    await server.stop();
    await waitFor('Redis said away', async () => /^! cannot reach Redis \(trying again\); shown: as read at \d\d:\d\d:\d\d$/m.test(await pane()), 30_000);
    await server.start();
    // The test's own client, a CLI command's, does not outlive the restart.
    client = await clientWithWorker();
    const [afterRestart] = (await client.stage({ command: ['true'], resources: 'gpu=5' })).runs;
    await waitFor('read again once Redis is back', async () => {
      const text = await pane();
      return text.includes(afterRestart!.id) && !text.includes('cannot reach Redis');
    }, 30_000);

    await tmux('send-keys', '-t', 'top', 'q');
    // Exit code 0, and nothing printed on the terminal given back.
    await waitFor('top quit', () => existsSync(exitFile), 15_000).catch(async (error: Error) => {
      throw new Error(`${error.message}; the pane:\n${await pane()}`);
    });
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('0');
    expect((await pane()).trim()).toBe('');
  }, 180_000);

  it('without a terminal says to use --once, exit 2; --once prints one frame', async () => {
    await clientWithWorker();
    const env = { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue };
    const refused = await execa('node', [BIN, 'top'], { env, reject: false, stdin: 'ignore' });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr.trim()).toBe('Error: fitq top needs a terminal on stdin and stdout; to print one frame elsewhere: fitq top --once');
    const once = await execa('node', [BIN, 'top', '--once'], { env, stdin: 'ignore' });
    expect(once.stdout).toMatch(/^WORKERS 1$/m);
    expect(once.stdout).toMatch(/^ {2}topw +active/m);
  }, 60_000);
});

describe('the frame', () => {
  /** A worker as read, with `n` runs, each on its own device. */
  function workerOf(name: string, runs: string[]): WorkerRecord {
    return {
      name, host: 'box', pid: 1, startedAt: 0, heartbeatAt: 0, leaseDeadline: 0, leaseMs: 30_000,
      liveness: { responding: true, heartbeatAgeMs: 100, leaseLeftMs: 29_000 },
      concurrency: 0, capacity: new Map([['gpu', 8_000_000n], ['mem', 512_000_000_000_000_000n], ['cpu', 64_000_000n]]),
      free: new Map([['gpu', BigInt(8 - runs.length) * 1_000_000n], ['mem', 0n], ['cpu', 1_000_000n]]),
      runs, devices: new Map(Array.from({ length: 8 }, (_, i) => [i, i < runs.length ? 0n : 1_000_000n])), policy: 'backfill', gpuPlacement: 'pack',
    } as WorkerRecord;
  }

  it('fits 80×24 with many workers, runs and shapes: some of each, the rest counted', () => {
    const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(12 - prefix.length, '0')}`);
    const workers = Array.from({ length: 6 }, (_, w) => workerOf(`worker-with-a-long-name-${w}`, ids(`a${w}`, 8)));
    const running = workers.flatMap((worker) =>
      worker.runs.map((id, i) => ({ id, status: 'running', worker: worker.name, devices: [i], startedAt: 0, command: ['python', 'train.py', '--a-very-long-argument-list'.repeat(3)], shell: false }) as unknown as RunRecord),
    );
    const shapes = Array.from({ length: 30 }, (_, i) => ({
      shape: `gpu=${i}`, demands: `gpu=${i + 1} mem=${i}G`, gpus: [], count: 30 - i, head: ids('b', 30)[i]!, why: `waiting for resources: gpu=${i + 1} > 0 free on every worker, a reason longer than the line is wide`,
    }));
    const snapshot: TopSnapshot = {
      at: 0, paused: true, counts: { counts: { running: 48, staged: 465 }, lumped: [], total: 513 }, workers, running,
      pool: [{ name: 'license', capacity: 4_000_000n, used: 1_000_000n }], shapes, shapeTotal: 31,
    };
    const lines = renderTop({ queue: 'default', snapshot, now: 60_000 }, { columns: 80, rows: 24 });
    expect(lines).toHaveLength(24);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toContain('PAUSED (fitq resume)');
    for (const title of ['WORKERS 6', 'RUNNING 48', 'STAGED 465 in 31 shapes', 'POOL']) expect(lines.some((line) => line.startsWith(title))).toBe(true);
    // What did not fit is counted: every run, every shape (the one never read too).
    const more = lines.filter((line) => /^ {2}… \d+ more$/.test(line)).map((line) => Number(/\d+/.exec(line)![0]));
    const shownRuns = lines.filter((line) => /^ {2}a\d/.test(line)).length;
    const shownShapes = lines.filter((line) => / b0{5,}/.test(line)).length;
    expect(more).toContain(48 - shownRuns);
    expect(more).toContain(31 - shownShapes);
    expect(shownRuns).toBeGreaterThan(0);
    expect(shownShapes).toBeGreaterThan(0);
  });

  it('shows what a run or worker name holds on one line, control characters escaped', () => {
    const worker = workerOf('w1', ['a00000000001']);
    const run = { id: 'a00000000001', status: 'running', worker: 'w1', devices: [0], startedAt: 0, command: ['echo', 'one\nline\x1b[2J'], shell: false } as unknown as RunRecord;
    const snapshot: TopSnapshot = {
      at: 0, paused: false, counts: { counts: { running: 1 }, lumped: [], total: 1 }, workers: [worker], running: [run], pool: [], shapes: [], shapeTotal: 0,
    };
    const lines = renderTop({ queue: 'q', snapshot, now: 1000 }, { columns: 120, rows: 40 });
    expect(lines.join('\n')).not.toContain('\x1b');
    expect(lines.find((line) => line.includes('a00000000001  w1'))).toContain('echo "one\\nline\\u001b[2J"');
  });
});
