/**
 * Connecting to Redis: one clear line (no stack trace, no password) and exit 1
 * when Redis is unreachable; which URL wins (--redis-url, FITQ_REDIS_URL,
 * REDIS_URL); and a worker that rides out a Redis restart by itself.
 */
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { FitqWorker } from '../../src/worker/worker.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { BIN, fitq, messages, newQueue, redisUrl } from '../support/fitq.js';

/** Every command that talks to Redis, with arguments that are otherwise valid. */
const COMMANDS: string[][] = [['runs'], ['stage', '--', 'echo', 'hi'], ['workers'], ['worker', '-r', 'a=1', '--run-once']];

/** Checks the output of a command that could not reach Redis. */
function expectConnectionFailure(result: { exitCode: number; stdout: string; stderr: string }, shownUrl: string): void {
  const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.exitCode, context).toBe(1);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, context).toHaveLength(1);
  expect(lines[0], context).toContain(shownUrl);
  expect(lines[0], context).toMatch(/redis/i);
  expect(result.stderr + result.stdout, context).not.toContain('    at ');
}

describe('when Redis cannot be reached', () => {
  it('every command prints one line naming the URL (password hidden), no stack trace, and exits 1', async () => {
    const port = await freePort();
    const queue = newQueue();
    const url = `redis://:secret@127.0.0.1:${port}`;
    const results = await Promise.all(COMMANDS.map((args) => fitq(args, { queue, env: { FITQ_REDIS_URL: url }, timeoutMs: 20_000 })));
    for (const result of results) {
      expectConnectionFailure(result, `redis://:***@127.0.0.1:${port}`);
      expect(result.stderr + result.stdout).not.toContain('secret');
    }
  });

  it('hides the password of a user:password URL, given by flag or environment', async () => {
    const port = await freePort();
    const queue = newQueue();
    const url = `redis://alice:secret@127.0.0.1:${port}/2`;
    const shown = `redis://alice:***@127.0.0.1:${port}/2`;
    const results = await Promise.all([
      fitq(['workers'], { queue, env: { FITQ_REDIS_URL: url } }),
      fitq(['runs', '--redis-url', url], { queue, env: { FITQ_REDIS_URL: '', REDIS_URL: '' } }),
      fitq(['stage', '--', 'true'], { queue, env: { FITQ_REDIS_URL: '', REDIS_URL: url } }),
    ]);
    for (const result of results) {
      expectConnectionFailure(result, shown);
      expect(result.stderr + result.stdout).not.toContain('secret');
    }
  });

  it('never prints the password, however the URL spells it', async () => {
    const port = await freePort();
    const queue = newQueue();
    const urls = [
      // An unencoded '@' in the password: ioredis (WHATWG URL) takes the last '@' as the end of it.
      `redis://:s3cr@tpass@127.0.0.1:${port}`,
      // Schemes are case-insensitive, for ioredis too.
      `REDIS://:s3crtpass@127.0.0.1:${port}`,
      // ioredis takes connection options, password included, from the query string.
      `redis://127.0.0.1:${port}/0?password=s3crtpass`,
    ];
    const results = await Promise.all(urls.map((url) => fitq(['runs'], { queue, env: { FITQ_REDIS_URL: url } })));
    const leaks = results
      .map((result, index) => ({ url: urls[index], exitCode: result.exitCode, stderr: result.stderr.trim() }))
      .filter(({ exitCode, stderr }) => exitCode !== 1 || !stderr.includes(`127.0.0.1:${port}`) || /s3cr|tpass/.test(stderr));
    expect(leaks).toEqual([]);
  });
});

describe('which Redis URL is used', () => {
  it('--redis-url beats FITQ_REDIS_URL, which beats REDIS_URL', async () => {
    const real = redisUrl();
    const bogus = (port: number) => `redis://127.0.0.1:${port}`;
    const [p1, p2] = [await freePort(), await freePort()];
    const queue = newQueue();
    const run = (args: string[], env: Record<string, string>) => fitq(['workers', ...args], { queue, env });
    const [flagWins, flagBogus, fitqWins, fitqBogus, redisUrlUsed] = await Promise.all([
      run(['--redis-url', real], { FITQ_REDIS_URL: bogus(p1), REDIS_URL: bogus(p2) }),
      run(['--redis-url', bogus(p1)], { FITQ_REDIS_URL: real, REDIS_URL: real }),
      run([], { FITQ_REDIS_URL: real, REDIS_URL: bogus(p2) }),
      run([], { FITQ_REDIS_URL: bogus(p1), REDIS_URL: real }),
      run([], { FITQ_REDIS_URL: '', REDIS_URL: real }),
    ]);
    expect(flagWins, flagWins.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.' });
    expectConnectionFailure(flagBogus, bogus(p1));
    expect(fitqWins, fitqWins.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.' });
    expectConnectionFailure(fitqBogus, bogus(p1));
    expect(redisUrlUsed, redisUrlUsed.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.' });
  });

  it('with two live servers, the run lands on the one the higher-precedence URL names', async () => {
    const other = await startRedisServer();
    const queue = newQueue();
    const clients: FitqClient[] = [];
    try {
      const [onFlag, onFitq] = await Promise.all([
        fitq(['stage', '--run-id', 'by-flag', '--redis-url', other.url, '--', 'true'], {
          queue,
          env: { FITQ_REDIS_URL: redisUrl(), REDIS_URL: redisUrl() },
        }),
        fitq(['stage', '--run-id', 'by-env', '--', 'true'], { queue, env: { FITQ_REDIS_URL: other.url, REDIS_URL: redisUrl() } }),
      ]);
      expect(onFlag.exitCode, onFlag.stderr).toBe(0);
      expect(onFitq.exitCode, onFitq.stderr).toBe(0);
      const onOther = await FitqClient.connect({ redisUrl: other.url, queue });
      clients.push(onOther);
      const onMain = await FitqClient.connect({ redisUrl: redisUrl(), queue });
      clients.push(onMain);
      expect((await onOther.listRuns()).map((run) => run.id).sort()).toEqual(['by-env', 'by-flag']);
      expect(await onMain.listRuns()).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await other.dispose();
    }
  });
});

describe('a worker and a Redis restart', () => {
  let server: RedisServer | undefined;
  let worker: FitqWorker | undefined;
  let client: FitqClient | undefined;
  let cliWorker: ResultPromise | undefined;

  afterEach(async () => {
    if (cliWorker && cliWorker.exitCode === null && cliWorker.signalCode === null) cliWorker.kill('SIGKILL');
    await cliWorker;
    await worker?.stop({ now: true });
    await client?.close();
    await server?.dispose();
    worker = client = server = cliWorker = undefined;
  });

  /** Stops redis-server, waits `downtimeMs`, and starts it again on the same port. */
  async function restart(target: RedisServer, downtimeMs: number): Promise<void> {
    await target.stop();
    await new Promise((resolve) => setTimeout(resolve, downtimeMs));
    await target.start();
  }

  async function startWorker(url: string, queue: string, logs: Record<string, unknown>[], leaseMs = 3000, pollIntervalMs?: number): Promise<FitqWorker> {
    const { pino } = await import('pino');
    const logger: Logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    return FitqWorker.start({ redisUrl: url, queue, logger, echoOutput: false, resources: 'a=1', name: 'phoenix', leaseMs, ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }) });
  }

  /**
   * Runs one run to the end before the restart, so the worker is fully up
   * (its executor's BullMQ connections included) when Redis goes away.
   */
  async function warmUp(url: string, queue: string, workerName: string): Promise<string> {
    client = await FitqClient.connect({ redisUrl: url, queue });
    const id = (await client.stage({ command: ['echo', 'before'], resources: 'a=1' })).runs[0]!.id;
    expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed', worker: workerName });
    await client.close();
    client = undefined;
    return id;
  }

  /** Stages `echo after` and waits (at most `timeoutMs`) for it to end; returns the record either way. */
  async function stageAndWait(queue: string, url: string, timeoutMs: number): Promise<{ run: RunRecord; stagedAt: number }> {
    client = await FitqClient.connect({ redisUrl: url, queue });
    const stagedAt = Date.now();
    const id = (await client.stage({ command: ['echo', 'after'], resources: 'a=1' })).runs[0]!.id;
    const run = await client.waitForEnd(id, timeoutMs).catch(() => client!.getRun(id));
    return { run, stagedAt };
  }

  it('keeps running through a restart that loses the data, registers again and runs what is staged after it', async () => {
    server = await startRedisServer();
    const queue = newQueue();
    const logs: Record<string, unknown>[] = [];
    worker = await startWorker(server.url, queue, logs);
    await warmUp(server.url, queue, 'phoenix');

    await restart(server, 1000);

    const { run } = await stageAndWait(queue, server.url, 10_000);
    const context = `worker log: ${messages(logs).join(' | ')}`;
    expect(messages(logs), context).not.toContain('Worker phoenix stopped');
    expect(run, context).toMatchObject({ status: 'completed', worker: 'phoenix', exitCode: 0 });
    expect((await client!.readLog(run.id)).filter((entry) => entry.kind === 'line')).toMatchObject([{ line: 'after' }]);
    expect((await client!.listWorkers()).map((w) => w.name)).toEqual(['phoenix']);
  });

  it('after reconnecting, starts a run staged while it was away, without waiting for a poll or a heartbeat', async () => {
    server = await startRedisServer();
    const queue = newQueue();
    const logs: Record<string, unknown>[] = [];
    // A lease and a safety-net poll of an hour: no heartbeat and no poll falls in
    // the test, so only coming back can start the run (the worker then learns it
    // lost its registration when it tries to claim).
    worker = await startWorker(server.url, queue, logs, 3_600_000, 3_600_000);
    await warmUp(server.url, queue, 'phoenix');
    // Down for a while, so the worker's reconnect back-off has grown and the
    // run below is staged (and its wake-up published) before it is back.
    await restart(server, 1000);
    const { run } = await stageAndWait(queue, server.url, 30_000);
    const context = `worker log: ${messages(logs).join(' | ')}`;
    expect(run, context).toMatchObject({ status: 'completed', worker: 'phoenix' });
  });

  it('keeps its registration and its records when the data survives the restart (appendonly)', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const logs: Record<string, unknown>[] = [];
    worker = await startWorker(server.url, queue, logs);
    const before = await warmUp(server.url, queue, 'phoenix');

    await restart(server, 0);

    const { run } = await stageAndWait(queue, server.url, 6000);
    expect(await client!.getRun(before)).toMatchObject({ status: 'completed', worker: 'phoenix' });
    expect(run).toMatchObject({ status: 'completed', worker: 'phoenix', exitCode: 0 });
    expect((await client!.listWorkers()).map((w) => w.name)).toEqual(['phoenix']);
    expect(messages(logs)).not.toContain('Worker phoenix lost its registration (lease expired); stopping its runs');
  });

  it('a CLI worker stays up through a restart, prints no stack trace, and runs what is staged after it', async () => {
    server = await startRedisServer();
    const queue = newQueue();
    let stdout = '';
    let stderr = '';
    cliWorker = execa('node', [BIN, 'worker', '-r', 'a=1', '--name', 'phoenix-cli', '--lease', '3', '--log-format', 'json'], {
      env: { FITQ_REDIS_URL: server.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
      stdin: 'ignore',
      buffer: false,
      reject: false,
    });
    cliWorker.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    cliWorker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await warmUp(server.url, queue, 'phoenix-cli');

    await restart(server, 1000);

    const { run } = await stageAndWait(queue, server.url, 6000);
    const context = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    expect(cliWorker.exitCode, context).toBeNull();
    expect(run, context).toMatchObject({ status: 'completed', worker: 'phoenix-cli' });
    expect(stderr, context).not.toContain('    at ');
    cliWorker.kill('SIGTERM');
    expect((await cliWorker).exitCode, context).toBe(0);
  });
});
