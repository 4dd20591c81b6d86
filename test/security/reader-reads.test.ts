/**
 * Reads only read. A Redis user made from the exact `fitq-reader` rule of
 * docs/security.md lists and shows runs, prints and follows output, lists
 * workers and reads the dashboard's runs data and overview, with no warning, in a
 * namespace where upkeep is due: a worker whose lease ran out still holds
 * two runs, BullMQ removed one job and retried another, and no live worker
 * has caught up. The reader sees each as upkeep will leave it (the dead
 * worker's runs lost, or staged again when retries are left), and no key
 * changes. `fitq wait` would reap, which Redis refuses the reader: it is
 * told so, and sees the run end all the same. Once a worker catches up, what
 * it wrote is what the reader saw.
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FitqClient, READ_ONLY_NOTE } from '../../src/client.js';
import { loadRunDetail } from '../../src/dashboard/run-detail.js';
import { listRunRows, parseRunQuery } from '../../src/dashboard/run-list.js';
import { serverTimeMs } from '../../src/model/liveness.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { readRunCounts } from '../../src/operations/overview.js';
import { namespaceKeys } from '../../src/queue/keys.js';
import { aclRule, PREFIX, type AclRole } from '../support/acl-rules.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { fitq, newQueue, type CliResult } from '../support/fitq.js';
import { snapshotKeys } from '../support/key-snapshot.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const PASSWORD = randomBytes(12).toString('hex');
const QUEUE = newQueue();
const keys = namespaceKeys(QUEUE, PREFIX);
const ROLES: readonly AclRole[] = ['worker', 'stager', 'reader'];
/** What the reaper writes for the runs of worker w2 (includes/workers/leaseLapsedReason.lua). */
const LAPSED = 'worker w2 stopped renewing its lease';

let server: RedisServer;
/** The default user: sets up what BullMQ does, takes snapshots, reads the ACL log. */
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer({ users: Object.fromEntries(ROLES.map((role) => [`fitq-${role}`, aclRule(role, QUEUE, PASSWORD)])) });
  admin = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
});

afterAll(async () => {
  admin?.disconnect();
  await server?.dispose();
});

const urlOf = (role: AclRole) => server.urlFor(`fitq-${role}`, PASSWORD);

function as(role: AclRole, args: string[]): Promise<CliResult> {
  return fitq(args, { queue: QUEUE, env: { FITQ_REDIS_URL: urlOf(role), REDIS_URL: '' } });
}

/** Exit 0 and nothing on stderr (no warning, no note). */
function expectClean(result: CliResult): void {
  expect({ exitCode: result.exitCode, stderr: result.stderr }, result.stdout).toEqual({ exitCode: 0, stderr: '' });
}

async function stage(args: string[]): Promise<string> {
  const result = await as('stager', ['stage', ...args]);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** Permission denials Redis logged since the last call (ACL LOG), as "user: reason object"; the log is reset. */
async function denials(): Promise<string[]> {
  const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
  await admin.call('ACL', 'LOG', 'RESET');
  return log.map((entry) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < entry.length; i += 2) fields[String(entry[i])] = String(entry[i + 1]);
    return `${fields.username}: ${fields.reason} ${fields.object}`;
  });
}

/** What a run's record says of how it ended or was put back, to compare a read's view with what the reaper wrote. */
function settled(run: RunRecord): Partial<RunRecord> {
  const { status, reason, endedAt, worker, restaged, restagedReason } = run;
  return { status, ...(status === 'staged' ? {} : { reason }), endedAt, worker, restaged, restagedReason };
}

describe('a read-only user reads a namespace whose upkeep is due', () => {
  it('sees dead workers\' runs and BullMQ\'s actions as upkeep will leave them, with no warning, and changes no key', async () => {
    await denials();
    const hello = await stage(['--run-id', 'hello', '--', 'echo', 'hello-line']);
    // Both run on w2 only: one with no retry left, one with a retry.
    const doomed = await stage(['-r', 'only-w2=1', '--run-id', 'doomed', '--', 'sh', '-c', 'echo doomed-line; exec sleep 60']);
    const retried = await stage(['-r', 'only-w2=1', '--retries', '1', '--run-id', 'second-chance', '--', 'sh', '-c', 'exec sleep 60']);
    const removed = await stage(['-r', 'nowhere=1', '--run-id', 'removed', '--', 'true']);
    const again = await stage(['-r', 'nowhere=1', '--run-id', 'again', '--', 'true']);
    expect((await as('stager', ['cancel', again])).exitCode).toBe(0);

    // w2 runs three and dies (SIGKILL) holding two; no worker is left to reap it or to catch up with BullMQ.
    const w2 = spawnCliWorker(QUEUE, ['-r', 'only-w2=2', '--name', 'w2', '--lease', '2'], urlOf('worker'));
    await w2.waitForMessage(`Run ${hello} completed`);
    await w2.waitForMessage(`Run ${doomed} started`);
    await w2.waitForMessage(`Run ${retried} started`);
    await waitFor('doomed-line in its output', async () => (await admin.xlen(keys.runLog(doomed))) > 0);
    w2.process.kill('SIGKILL');
    await w2.exited;
    await waitFor("w2's lease to run out", async () => {
      const deadline = Number(await admin.zscore(keys.workers, 'w2'));
      return serverTimeMs(await admin.time()) > deadline;
    });
    // BullMQ removes one staged run's job and retries a canceled run (as Bull Board would).
    const bull = new Queue(keys.queue.name, { prefix: keys.queue.prefix, connection: { url: server.url } });
    try {
      await (await bull.getJob(removed))!.remove();
      await (await bull.getJob(again))!.retry('failed');
    } finally {
      await bull.close();
    }
    // BullMQ's locks of its runs expire by themselves (Redis's doing, no one's write): gone before the snapshot.
    const locks = [doomed, retried].map((id) => keys.queue.key(`${id}:lock`));
    await waitFor("the dead worker's job locks to expire", async () => (await admin.exists(...locks)) === 0);
    const before = await snapshotKeys(admin, keys.base);

    const [runs, table, showDoomed, showRetried, showAgain, showRemoved, logs, follow, workers, waited] = await Promise.all([
      as('reader', ['runs', '--json']),
      as('reader', ['runs']),
      as('reader', ['runs', 'show', doomed, '--json']),
      as('reader', ['runs', 'show', retried, '--json']),
      as('reader', ['runs', 'show', again, '--json']),
      as('reader', ['runs', 'show', removed]),
      as('reader', ['logs', hello]),
      as('reader', ['logs', '-f', doomed]),
      as('reader', ['workers', '--json']),
      as('reader', ['wait', doomed]),
    ]);
    for (const result of [runs, table, showDoomed, showRetried, showAgain, logs, workers]) expectClean(result);

    // The dead worker's runs: lost with the reaper's reason; the one with a retry left staged again, as the reaper will put it.
    const listed = new Map((JSON.parse(runs.stdout) as { runs: RunRecord[] }).runs.map((run) => [run.id, run]));
    expect([...listed.keys()]).toEqual([hello, doomed, retried, again]);
    expect(listed.get(hello)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(listed.get(doomed)).toMatchObject({ status: 'lost', reason: LAPSED, worker: 'w2', endedAt: expect.any(Number) as unknown });
    expect(listed.get(retried)).toMatchObject({ status: 'staged', restaged: 1, restagedReason: `${LAPSED} (re-staged 1 of 1)` });
    expect(listed.get(retried)!.worker).toBeUndefined();
    // Retried from BullMQ: staged again, as reconciling will stage it.
    expect(listed.get(again)).toMatchObject({ status: 'staged', reason: 'retried from BullMQ (it was canceled)', resources: { nowhere: 1 } });
    expect(table.stdout).toMatch(new RegExp(`^${doomed} +lost\\b.*${LAPSED}$`, 'm'));

    const shown = JSON.parse(showDoomed.stdout) as RunRecord;
    expect(shown).toMatchObject({ status: 'lost', reason: LAPSED, endedAt: listed.get(doomed)!.endedAt });
    expect(JSON.parse(showRetried.stdout)).toMatchObject({
      status: 'staged', restaged: 1, attempts: [{ attempt: 1, worker: 'w2', status: 'lost', reason: LAPSED }],
    });
    expect(JSON.parse(showAgain.stdout)).toMatchObject({ status: 'staged', reason: 'retried from BullMQ (it was canceled)' });
    expect({ exitCode: showRemoved.exitCode, stderr: showRemoved.stderr.trim() }).toEqual({ exitCode: 2, stderr: `Error: unknown run '${removed}'` });
    expect(logs.stdout.trim()).toBe('hello-line');
    // Followed, the run ends at once as lost: its output, then how it ended, exit 1.
    expect(follow.stdout.trim()).toBe('doomed-line');
    expect({ exitCode: follow.exitCode, stderr: follow.stderr.trim() }).toMatchObject({ exitCode: 1, stderr: expect.stringContaining(LAPSED) as unknown });
    expect(follow.stderr).not.toContain('Warning');
    expect(JSON.parse(workers.stdout)).toEqual([]);
    // fitq wait would reap (Redis refuses it the reader, which is told so), and reads the run lost all the same.
    expect(waited.exitCode, waited.stderr).toBe(1);
    expect(waited.stderr).toContain(`Warning: ${READ_ONLY_NOTE}`);
    expect(waited.stderr).toContain(LAPSED);

    // The dashboard's runs data and run page, read by the reader.
    const reader = await FitqClient.connect({ redisUrl: urlOf('reader'), queue: QUEUE, prefix: PREFIX });
    try {
      const rows = new Map((await listRunRows(reader, parseRunQuery(new URLSearchParams('')))).rows.map((row) => [row.run.id, row.run.status]));
      expect(Object.fromEntries(rows)).toEqual({ [hello]: 'completed', [doomed]: 'lost', [retried]: 'staged', [again]: 'staged' });
      expect((await loadRunDetail(reader, doomed)).run).toMatchObject({ status: 'lost', reason: LAPSED });
      // The overview's counts, as the runs page shows them.
      expect((await readRunCounts(reader)).counts).toMatchObject({ completed: 1, lost: 1, staged: 2, running: 0, canceled: 0 });
    } finally {
      await reader.close();
    }

    // Nothing was written, and Redis refused the reader nothing but fitq wait's reaping.
    expect(await snapshotKeys(admin, keys.base)).toEqual(before);
    expect(await denials()).toEqual(['fitq-reader: command eval']);

    // A worker catches up: it reaps w2 and follows BullMQ. What it writes is what the reader saw.
    const w1 = spawnCliWorker(QUEUE, ['-r', 'cpu=1', '--name', 'w1'], urlOf('worker'));
    await w1.waitForMessage('Worker w2 stopped renewing its lease: its runs are lost');
    await w1.waitForMessage(`Run ${again} was retried from BullMQ (it was canceled): staged again`);
    const client = await FitqClient.connect({ redisUrl: server.url, queue: QUEUE, prefix: PREFIX });
    try {
      expect(settled(await client.getRun(doomed))).toEqual(settled(shown));
      const reaped = await client.getRun(retried);
      expect(settled(reaped)).toEqual(settled(listed.get(retried)!));
      expect(reaped.attempts?.map(({ endedAt: _endedAt, ...attempt }) => attempt)).toEqual(
        (JSON.parse(showRetried.stdout) as RunRecord).attempts?.map(({ endedAt: _endedAt, ...attempt }) => attempt),
      );
      expect(await client.getRun(again)).toMatchObject({ status: 'staged', resources: { nowhere: 1 } });
      await waitFor(`w1 to forget ${removed}`, async () => (await admin.zscore(keys.ids, removed)) === null);
    } finally {
      await client.close();
    }
  });
});
