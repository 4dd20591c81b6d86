/**
 * Connecting to Redis: one clear line (no stack trace, no password) and exit 1
 * when Redis is unreachable; which URL wins (--redis-url, FITQ_REDIS_URL,
 * REDIS_URL); and a worker that rides out a Redis restart by itself.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { FitqClient } from '../../src/queue/client.js';
import { FitqWorker } from '../../src/worker/worker.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { fitq, messages, newQueue, redisUrl } from '../support/fitq.js';

/** Polls `probe` until it returns something other than undefined/false, or fails after `timeoutMs`. */
async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

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
  it('every command prints one line naming the URL, no stack trace, and exits 1', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const queue = newQueue();
    const results = await Promise.all(COMMANDS.map((args) => fitq(args, { queue, env: { FITQ_REDIS_URL: url }, timeoutMs: 20_000 })));
    results.forEach((result) => expectConnectionFailure(result, url));
  });

  it('never prints the password of the URL', async () => {
    const port = await freePort();
    const queue = newQueue();
    const cases = [
      { url: `redis://:secret@127.0.0.1:${port}`, shown: `redis://:***@127.0.0.1:${port}` },
      { url: `redis://alice:secret@127.0.0.1:${port}/2`, shown: `redis://alice:***@127.0.0.1:${port}/2` },
    ];
    const runs = cases.flatMap(({ url, shown }) =>
      COMMANDS.map(async (args) => ({ shown, result: await fitq(args, { queue, env: { FITQ_REDIS_URL: url }, timeoutMs: 20_000 }) })),
    );
    // The flag is redacted the same way as the environment.
    runs.push(
      fitq(['runs', '--redis-url', cases[0]!.url], { queue, env: { FITQ_REDIS_URL: '', REDIS_URL: '' } }).then((result) => ({
        shown: cases[0]!.shown,
        result,
      })),
    );
    for (const { shown, result } of await Promise.all(runs)) {
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
    results.forEach((result, index) => {
      const context = `URL ${urls[index]} gave:\n${result.stderr}`;
      expect(result.exitCode, context).toBe(1);
      expect(result.stderr, context).toContain(`127.0.0.1:${port}`);
      expect(result.stderr, context).not.toMatch(/s3cr|tpass/);
    });
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
    expect(flagWins, flagWins.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.\n' });
    expectConnectionFailure(flagBogus, bogus(p1));
    expect(fitqWins, fitqWins.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.\n' });
    expectConnectionFailure(fitqBogus, bogus(p1));
    expect(redisUrlUsed, redisUrlUsed.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.\n' });
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
      await other.stop();
    }
  });
});

describe('a worker and a Redis restart', () => {
  let server: RedisServer | undefined;
  let worker: FitqWorker | undefined;
  let client: FitqClient | undefined;

  afterEach(async () => {
    await worker?.stop({ now: true });
    await client?.close();
    await server?.stop();
    worker = client = server = undefined;
  });

  /**
   * Stops redis-server and starts it again on the same port. (RedisServer.stop
   * also deletes its data directory, after which start fails: shut it down
   * with SHUTDOWN instead.)
   */
  async function restart(target: RedisServer): Promise<void> {
    const admin = new Redis(target.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    admin.on('error', () => {});
    await admin.connect();
    await admin.call('SHUTDOWN', 'NOSAVE').catch(() => {}); // the server goes before it answers
    admin.disconnect();
    // Wait until the port is free again.
    await waitFor('the stopped redis-server to release its port', async () => {
      const probe = new Redis(target.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return false;
      } catch {
        return true;
      } finally {
        probe.disconnect();
      }
    });
    await target.start();
  }

  async function startWorker(url: string, queue: string, logs: Record<string, unknown>[]): Promise<FitqWorker> {
    const { pino } = await import('pino');
    const logger: Logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    return FitqWorker.start({ redisUrl: url, queue, logger, echoOutput: false, resources: 'a=1', name: 'phoenix', leaseMs: 3000 });
  }

  it('reconnects by itself and runs what is staged after the restart (data lost)', async () => {
    server = await startRedisServer();
    const queue = newQueue();
    const logs: Record<string, unknown>[] = [];
    worker = await startWorker(server.url, queue, logs);
    client = await FitqClient.connect({ redisUrl: server.url, queue });
    const before = (await client.stage({ command: ['echo', 'before'], resources: 'a=1' })).runs[0]!.id;
    expect(await client.waitForEnd(before, 10_000)).toMatchObject({ status: 'completed', worker: 'phoenix' });
    await client.close();
    client = undefined;

    await restart(server);

    client = await FitqClient.connect({ redisUrl: server.url, queue });
    expect(await client.listRuns()).toEqual([]); // no persistence: everything is gone
    const after = (await client.stage({ command: ['echo', 'after'], resources: 'a=1' })).runs[0]!.id;
    expect(await client.waitForEnd(after, 15_000)).toMatchObject({ status: 'completed', worker: 'phoenix', exitCode: 0 });
    expect((await client.readLog(after)).filter((entry) => entry.kind === 'line')).toMatchObject([{ line: 'after' }]);
    // It registered again and holds its lease.
    expect((await client.listWorkers()).map((w) => w.name)).toEqual(['phoenix']);
    expect(worker.activeRuns).toEqual([]);
    expect(messages(logs)).not.toContain('Another live worker took the name phoenix; stopping');
  });

  it('reconnects by itself and keeps its registration when the data survives (appendonly)', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const logs: Record<string, unknown>[] = [];
    worker = await startWorker(server.url, queue, logs);
    client = await FitqClient.connect({ redisUrl: server.url, queue });
    const before = (await client.stage({ command: ['echo', 'before'], resources: 'a=1' })).runs[0]!.id;
    expect(await client.waitForEnd(before, 10_000)).toMatchObject({ status: 'completed' });
    await client.close();
    client = undefined;

    await restart(server);

    client = await FitqClient.connect({ redisUrl: server.url, queue });
    expect(await client.getRun(before)).toMatchObject({ status: 'completed' });
    const after = (await client.stage({ command: ['echo', 'after'], resources: 'a=1' })).runs[0]!.id;
    expect(await client.waitForEnd(after, 15_000)).toMatchObject({ status: 'completed', worker: 'phoenix', exitCode: 0 });
    expect((await client.listWorkers()).map((w) => w.name)).toEqual(['phoenix']);
    expect(messages(logs)).not.toContain('Worker phoenix lost its registration (lease expired); stopping its runs');
  });
});
