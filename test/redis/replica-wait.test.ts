/**
 * --redis-wait-replicas: a claim is confirmed by replicas before its run
 * starts, staged runs before their ids are printed. Against a real master
 * and replica; the replica frozen (SIGSTOP) confirms nothing, as a replica
 * whose link is down.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { fitq, newQueue } from '../support/fitq.js';
import { pollUntil, startRedisNode, waitForReplicas, type RedisNode } from '../support/redis-node.js';
import { freePort } from '../support/redis-server.js';

let master: RedisNode;
let replica: RedisNode;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'fitq-replica-wait-'));

beforeAll(async () => {
  const args = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`];
  const masterPort = await freePort();
  master = await startRedisNode(masterPort, args(masterPort));
  const replicaPort = await freePort();
  replica = await startRedisNode(replicaPort, [...args(replicaPort), '--replicaof', '127.0.0.1', String(masterPort)]);
  await waitForReplicas(masterPort);
  url = `redis://127.0.0.1:${masterPort}`;
}, 60_000);

afterAll(async () => {
  replica?.thaw();
  await Promise.all([master?.kill(), replica?.kill()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('--redis-wait-replicas', () => {
  it('stages runs once the replica confirms them; with none confirming, says so in one line and exits 1', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: url };
    const confirmed = await fitq(['stage', '--redis-wait-replicas', '1', '--', 'true'], { queue, env });
    expect(confirmed.exitCode, confirmed.stderr).toBe(0);
    expect(confirmed.stderr).not.toMatch(/Error|replica/);
    expect(confirmed.stdout.trim()).toMatch(/^[0-9a-f]{12}$/);

    replica.freeze();
    try {
      const unconfirmed = await fitq(['stage', '--run-id', 'late', '--', 'true'], {
        queue, env: { ...env, FITQ_REDIS_WAIT_REPLICAS: '1', FITQ_REDIS_WAIT_TIMEOUT: '300ms' },
      });
      expect(unconfirmed.stderr.trim()).toBe(
        'Error: run late staged on the Redis master, but only 0 of 1 replica confirmed it within 300ms: a failover now could lose it',
      );
      expect(unconfirmed.exitCode).toBe(1);
      expect(unconfirmed.stdout).toBe('');
    } finally {
      replica.thaw();
    }
  });

  it('starts a run only once the replica has its claim', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: url };
    const started = join(dir, 'started');
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', `touch '${started}'`], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();

    replica.freeze();
    let worker: ReturnType<typeof spawnCliWorker>;
    try {
      worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--redis-wait-replicas', '1', '--redis-wait-timeout', '200ms'], url);
      await worker.waitForMessage(`Run ${runId} waits to start: 0 of 1 replica confirmed its claim within 200ms (--redis-wait-replicas); asking again`);
      // Claimed on the master, not started.
      expect(existsSync(started)).toBe(false);
    } finally {
      replica.thaw();
    }
    await worker.waitForMessage(`Run ${runId}: its claim confirmed by 1 replica; starting it`);
    await worker.waitForMessage(`Run ${runId} completed`);
    expect(existsSync(started)).toBe(true);
    expect(worker.messages().filter((message) => /confirmed its end/.test(message))).toEqual([]);
  });

  it('starts a retried run again when this worker claims it while the replica still confirms its first end', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: url };
    const marker = join(dir, `first-${queue}`);
    const gate = join(dir, `gate-${queue}`);
    // The first attempt waits for the gate, then fails; the second succeeds.
    const script = `if [ -e '${marker}' ]; then echo second; else touch '${marker}'; while [ ! -e '${gate}' ]; do sleep 0.05; done; exit 3; fi`;
    const staged = await fitq(['stage', '--retry-on-failure', '1', '--', 'sh', '-c', script], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();
    const worker = spawnCliWorker(queue, ['--redis-wait-replicas', '1', '--redis-wait-timeout', '2s'], url);
    await worker.waitForMessage(`Run ${runId} started`);
    await pollUntil('the first attempt under way', async () => existsSync(marker) || undefined);
    // Its end is re-staged at once (a retry) and this worker hears of it while it still waits on the frozen
    // replica to confirm that end: its new claim comes before the end is done with.
    replica.freeze();
    try {
      writeFileSync(gate, '');
      await worker.waitForMessage(`Run ${runId}: only 0 of 1 replica confirmed its end within 2s; it is recorded again if a failover loses it`);
    } finally {
      replica.thaw();
    }
    await worker.waitForMessage(`Run ${runId} completed`);
    const shown = await fitq(['runs', 'show', runId, '--json'], { queue, env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'completed', attempts: [{ status: 'failed' }] });
    expect(worker.messages().filter((message) => message.includes('claimed again'))).toEqual([]);
  });

  it.each([
    [['--redis-wait-replicas', 'two'], "Error: expected --redis-wait-replicas to be a number of replicas (0 to 999), got 'two'"],
    [['--redis-wait-timeout', '1s'], "Error: --redis-wait-timeout '1s' needs --redis-wait-replicas N"],
    [['--redis-wait-replicas', '1', '--redis-wait-timeout', '0'], "Error: expected --redis-wait-timeout to be more than 0 (0 would make WAIT block for ever), got '0'"],
    [['--redis-wait-replicas', '1', '--redis-wait-timeout', 'soon'], "Error: expected --redis-wait-timeout to be a duration such as 7d, 12h, 30m or 1h30m, got 'soon'"],
  ])('refuses %j in one line, exit 2, before anything is staged', async (flags, message) => {
    const queue = newQueue();
    const refused = await fitq(['stage', ...flags, '--', 'true'], { queue, env: { FITQ_REDIS_URL: url } });
    expect(refused.stderr.trim()).toBe(message);
    expect(refused.exitCode).toBe(2);
    const listed = await fitq(['runs', '--json'], { queue, env: { FITQ_REDIS_URL: url } });
    expect(JSON.parse(listed.stdout)).toMatchObject({ runs: [] });
  });

  it('is refused the same way by fitq worker', async () => {
    const refused = await fitq(['worker', '--redis-wait-replicas', '-1'], { queue: newQueue(), env: { FITQ_REDIS_URL: url } });
    expect(refused.stderr).toContain("expected --redis-wait-replicas to be a number of replicas (0 to 999), got '-1'");
    expect(refused.exitCode).toBe(2);
  });
});
