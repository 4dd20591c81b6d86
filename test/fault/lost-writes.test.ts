/**
 * Writes a failover loses: Redis replication is asynchronous, so a write the
 * master acknowledged but had not sent to its replica is gone once the
 * replica takes over. Reproduced for real on a Sentinel group: the replica
 * is frozen and cut off, the write is made, the master is killed -9 and the
 * replica promoted.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { fitq, newQueue } from '../support/fitq.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';

let group: SentinelGroup;
const dir = mkdtempSync(join(tmpdir(), 'fitq-lost-writes-'));

beforeAll(async () => {
  group = await startSentinelGroup();
}, 60_000);

afterAll(async () => {
  await group?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** A shell command that notes each start in `starts`, then runs until `go` exists and exits 0. */
const noteStartThenWait = (starts: string, go: string) => `echo start >> '${starts}'; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 0`;

/**
 * A run B running on worker `lw` (cpu=1), and a run A staged behind it;
 * then, in writes the failover loses, B ends and lw claims and starts A.
 * `meanwhile` runs once A started there, before the master is killed.
 */
async function loseTheClaimOfA(label: string, meanwhile: (worker: ReturnType<typeof spawnCliWorker>) => void = () => undefined) {
  const queue = newQueue();
  const env = { FITQ_REDIS_URL: group.url };
  const [goA, goB, starts] = ['go-a', 'go-b', 'starts'].map((name) => join(dir, `${label}-${name}`)) as [string, string, string];
  const stage = async (command: string) => {
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', command], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    return staged.stdout.trim();
  };
  const b = await stage(`while [ ! -e '${goB}' ]; do sleep 0.05; done; exit 0`);
  // A long lease: the worker may be frozen through the failover without being reaped.
  const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'lw', '--lease', '120', '--kill-grace', '1'], group.url);
  await worker.waitForMessage(`Run ${b} started`);
  const a = await stage(noteStartThenWait(starts, goA));
  const oldMaster = await group.master();
  await group.failoverLosing(async () => {
    writeFileSync(goB, '');
    // B's end and A's claim: acknowledged by the master, never to reach the replica.
    await worker.waitForMessage(`Run ${a} started`);
    meanwhile(worker);
  });
  // It comes back as a replica of the new master, for the next test's failover.
  await group.revive(oldMaster);
  const startsOfA = () => readFileSync(starts, 'utf8').split('\n').filter(Boolean).length;
  return { queue, env, worker, a, b, goA, startsOfA };
}

describe('writes a failover loses', () => {
  it('a run whose recorded end the failover lost is recorded again by its worker: completed with exit 0, never lost', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: group.url };
    const go = join(dir, 'go');
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 0`], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'lw'], group.url);
    await worker.waitForMessage(`Run ${runId} started`);

    const oldMaster = await group.master();
    await group.failoverLosing(async () => {
      writeFileSync(go, '');
      // Acknowledged by the master, never to reach the replica.
      await worker.waitForMessage(`Run ${runId} completed`);
    });
    await group.revive(oldMaster);

    // The new master holds the run as running on lw: its worker records the end again at its next heartbeat.
    await worker.waitForMessage(`Run ${runId}: its end recorded again (completed)`, 60_000);
    const shown = await fitq(['runs', '--json'], { queue, env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ runs: [{ id: runId, status: 'completed', exitCode: 0, worker: 'lw' }] });
    expect(worker.messages().filter((message) => /giving it back|lost/.test(message))).toEqual([]);
  }, 180_000);

  it('a run whose claim the failover lost is claimed back by its worker and runs on: started once, its true end recorded', async () => {
    const { queue, env, worker, a, b, goA, startsOfA } = await loseTheClaimOfA('back');
    // The new master holds B as running on lw and A as staged: lw records B's end again, then either its heartbeat
    // takes A's claim back, or its claim loop (woken as Redis came back) claims A anew first and keeps the process.
    const claimedBack = `Run ${a}: Redis lost its claim in a failover (the new master never received it); claimed it back as it was, the run goes on`;
    const adopted = `Run ${a} was claimed again by this worker, which already runs it (a failover lost its claim): it runs on under the new claim`;
    const either = [claimedBack, adopted].map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    await worker.waitForMessage(new RegExp(`^(${either})$`), 60_000);
    writeFileSync(goA, '');
    await worker.waitForMessage(`Run ${a} completed`);
    const shown = await fitq(['runs', '--json'], { queue, env });
    const runs = (JSON.parse(shown.stdout) as { runs: { id: string }[] }).runs;
    expect(runs.find((run) => run.id === a)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'lw' });
    expect(runs.find((run) => run.id === b)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'lw' });
    expect(startsOfA()).toBe(1);
    expect(worker.messages().filter((message) => /giving it back|stopping|lost$/.test(message))).toEqual([]);
  }, 180_000);

  it('a run whose lost claim another worker made meanwhile: the first copy is stopped, and the worker and the run\'s history say what happened', async () => {
    // The worker frozen through the failover: another worker claims A before it can take A back.
    const { queue, env, worker, a, goA, startsOfA } = await loseTheClaimOfA('taken', (lw) => process.kill(lw.pid, 'SIGSTOP'));
    const other = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'lw2'], group.url);
    try {
      await other.waitForMessage(`Run ${a} started`, 60_000);
    } finally {
      process.kill(worker.pid, 'SIGCONT');
    }
    await worker.waitForMessage(
      `Run ${a}: its claim was lost in a Redis failover and worker lw2 claimed it again meanwhile (the run goes on there); stopping this copy`,
      60_000,
    );
    writeFileSync(goA, '');
    await other.waitForMessage(`Run ${a} completed`);
    const shown = await fitq(['runs', 'show', a, '--json'], { queue, env });
    const run = JSON.parse(shown.stdout) as { status: string; worker: string; attempts: unknown[] };
    expect(run).toMatchObject({ status: 'completed', worker: 'lw2' });
    expect(run.attempts).toEqual([
      expect.objectContaining({
        worker: 'lw', status: 'stopped',
        reason: 'its claim on lw was lost in a Redis failover and worker lw2 claimed the run again meanwhile: this copy was stopped',
      }),
    ]);
    // Both copies started: without --redis-wait-replicas, a failover can do that (docs/high-availability.md).
    expect(startsOfA()).toBe(2);
    process.kill(other.pid, 'SIGTERM');
    await other.exited;
  }, 180_000);
});
