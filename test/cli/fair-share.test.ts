/**
 * Fair share (fitq share): among runs of equal priority a real CLI worker
 * starts first the runs of the user who has used least of their share, so
 * two users' sweeps share a worker in proportion to their shares; higher
 * priority still goes first; a blocked big run is still held for; a run
 * behind another user's says why; the commands refuse what is wrong.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, fitqOk, newQueue, stageAsUser } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/** The users of the runs, in the order they started (the Redis server's clock, ties by start order of ids staged). */
function startOrder(runs: readonly RunRecord[]): string[] {
  return runs.filter((run) => run.startedAt !== undefined).sort((a, b) => a.startedAt! - b.startedAt!).map((run) => run.user!);
}

/** Runs everything two users staged on one worker slot (`-r cpu=1`), and returns who started in which order. */
async function sweeps(queue: string, perUser: number): Promise<string[]> {
  const client = await connectClient(queue);
  // Staged before the worker: alice's whole sweep is older than bob's.
  const ids = [
    ...(await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--repeat', String(perUser), '--', 'sleep', '0.1'])),
    ...(await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--repeat', String(perUser), '--', 'sleep', '0.1'])),
  ];
  const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
  for (const id of ids) expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed' });
  worker.process.kill('SIGTERM');
  await worker.exited;
  return startOrder(await client.listRuns({}));
}

const count = (users: readonly string[], user: string): number => users.filter((each) => each === user).length;

describe('fitq share', () => {
  it('sets shares, weights, the half-life and the switch, shows them, and refuses what is wrong (exit 2)', async () => {
    const queue = newQueue();
    expect(await fitqOk(queue, ['share'])).toBe(
      'fair share on; half-life 7d; weights per second: cpu=1 gpu=10 run=1\nNo usage yet, and no share set (fitq share set alice=2 bob=1).',
    );
    expect(await fitqOk(queue, ['share', 'set', 'alice=2', 'bob=1', '--weight', 'gpu=20', '--weight', 'mem=0.000000001', '--half-life', '3d'])).toMatch(
      /^fair share on; half-life 3d; weights per second: cpu=1 gpu=20 mem=1e-9 run=1\nUSER +SHARE +USAGE +USED +ORDER +RUNNING\nalice +2 +0 +0× +1 *\nbob +1 +0 +0× +1 *$/,
    );
    expect(JSON.parse(await fitqOk(queue, ['share', '--json']))).toEqual({
      on: true, preempt: false, halfLifeMs: 3 * 86_400_000, weights: { cpu: 1, gpu: 20, mem: 1e-9, run: 1 },
      users: [
        { user: 'alice', usage: 0, share: 2, used: 0, order: 1, rate: 0 },
        { user: 'bob', usage: 0, share: 1, used: 0, order: 1, rate: 0 },
      ],
    });
    expect(await fitqOk(queue, ['share', 'rm', 'bob', '--weight', 'gpu'])).toMatch(/weights per second: cpu=1 gpu=10 mem=1e-9 run=1\n.*\nalice +2 /);
    expect(await fitqOk(queue, ['share', 'set', '--off'])).toMatch(/^fair share off \(runs go by priority and age\);/);
    expect(await fitqOk(queue, ['share', 'set', '--on'])).toMatch(/^fair share on;/);

    const refusals: [string[], string][] = [
      [['share', 'set'], 'Error: name what to change, e.g. alice=2 bob=1, --weight gpu=10, --half-life 7d, --on, --off or --preempt'],
      [['share', 'set', 'alice=0'], "Error: invalid 'alice=0': a share is a positive number up to 1000000"],
      [['share', 'set', 'alice=two'], "Error: invalid 'alice=two': a share is a positive number up to 1000000"],
      [['share', 'set', 'alice'], "Error: expected NAME=VALUE such as alice=2, got 'alice'"],
      [['share', 'set', 'al ice=1'], "Error: invalid user 'al ice': a user name is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -)"],
      [['share', 'set', '--weight', '9gpu=1'], "Error: invalid '9gpu=1': weigh a resource name, or run (a running run itself)"],
      [['share', 'set', '--weight', 'gpu=-1'], "Error: invalid 'gpu=-1': a weight is a non-negative number up to 1000000"],
      [['share', 'set', '--half-life', '7'], "Error: expected --half-life to be a duration such as 7d, 12h, 30m or 1h30m (a number needs a unit: ms, s, m, h, d or w), got '7'"],
      [['share', 'set', '--half-life', '10ms'], "Error: expected --half-life to be at least 1s, got '10ms'"],
      [['share', 'reset'], 'Error: name the users whose usage to forget, or --all (not both)'],
      [['share', 'reset', 'alice', '--all'], 'Error: name the users whose usage to forget, or --all (not both)'],
    ];
    for (const [args, message] of refusals) {
      const result = await fitq(args, { queue });
      expect({ args, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ args, exitCode: 2, stderr: message });
    }
  });

  it("shares one worker between two users' sweeps in proportion to their shares; off, the older sweep goes first", async () => {
    const fair = newQueue();
    await fitqOk(fair, ['share', 'set', 'alice=2', 'bob=1']);
    const order = await sweeps(fair, 18);
    // While both have runs staged (the first 27 starts), alice gets two starts to bob's one (runs of one length).
    const both = order.slice(0, 27);
    expect(count(both, 'alice')).toBeGreaterThanOrEqual(16);
    expect(count(both, 'alice')).toBeLessThanOrEqual(20);
    // Bob's first run went soon after alice's first started counting, not after her sweep.
    expect(order.indexOf('bob')).toBeLessThanOrEqual(2);
    // Usage is counted, and nothing is left running.
    const shown = JSON.parse(await fitqOk(fair, ['share', '--json'])) as { users: { user: string; usage: number; rate: number }[] };
    expect(shown.users.map(({ user }) => user).sort()).toEqual(['alice', 'bob']);
    for (const { usage, rate } of shown.users) {
      expect(usage).toBeGreaterThan(0);
      expect(rate).toBe(0);
    }

    const off = newQueue();
    await fitqOk(off, ['share', 'set', '--off']);
    expect((await sweeps(off, 4)).join(' ')).toBe('alice alice alice alice bob bob bob bob');
  });

  it("puts a heavy user's runs behind a light user's, says why, and still lets priority go first", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // Alice uses the worker (her usage counts as her run runs); then both stage.
    const [using] = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'sleep', '2']);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    await waitFor('alice running', async () => (await client.getRun(using!)).status === 'running' || undefined);
    const [aliceRun] = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'true']);
    const [bobRun] = await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--', 'true']);
    const [urgent] = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--priority', '10', '--', 'true']);
    const why = await fitqOk(queue, ['runs', 'show', aliceRun!]);
    expect(why).toMatch(/behind bob's runs by fair share: alice has used 2× their share, bob 0× \(fitq share\)/);
    for (const id of [using!, aliceRun!, bobRun!, urgent!]) await client.waitForEnd(id);
    worker.process.kill('SIGTERM');
  await worker.exited;
    const started = (await client.listRuns({})).filter((run) => [aliceRun, bobRun, urgent].includes(run.id)).sort((a, b) => a.startedAt! - b.startedAt!);
    expect(started.map((run) => run.id)).toEqual([urgent, bobRun, aliceRun]);
  });

  it("holds for a blocked big run of a user above their share: a stream of another user's small runs does not starve it", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w1']);
    // Bob keeps one slot busy with a stream of small runs; alice has used more, and wants the whole worker.
    await fitqOk(queue, ['share', 'set', 'alice=1', 'bob=4']);
    const first = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'sleep', '0.5']);
    await client.waitForEnd(first[0]!);
    const bob = await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--repeat', '12', '--', 'sleep', '0.3']);
    const [big] = await stageAsUser(queue, 'alice', ['-r', 'cpu=2', '--', 'true']);
    for (const id of [...bob, big!]) await client.waitForEnd(id);
    worker.process.kill('SIGTERM');
  await worker.exited;
    const runs = await client.listRuns({});
    const bigStart = runs.find((run) => run.id === big)!.startedAt!;
    const bobStarts = runs.filter((run) => bob.includes(run.id)).map((run) => run.startedAt!);
    // The big run started while bob still had runs staged: it was held for, not starved.
    expect(bobStarts.filter((at) => at > bigStart).length).toBeGreaterThan(0);
  });
});
