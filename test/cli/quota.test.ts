/**
 * Users' quotas (fitq quota set|ls|rm): the claim never lets a user's runs
 * hold more than their quota at any moment, checked from the runs' own
 * start and end times across real CLI workers; a run over it waits and
 * says why; a `staged` quota refuses a stage whole; a quota holds at once
 * for runs staged, and running, before it was set; nothing leaks.
 */
import { describe, expect, it } from 'vitest';
import { namespaceKeys } from '../../src/queue/keys.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { Scripts } from '../../src/queue/scripts.js';
import { openRunQueue } from '../support/bullmq.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, fitqOk, newQueue, redisUrl, stageAsUser } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/**
 * The most a user's runs (or the runs a test picks) held at once, by what: `running` (runs) and each
 * resource, from the runs' start (claim) and end times, both by the Redis
 * server's clock: a run that ends at the moment another starts is counted
 * gone first, as its end gives its share back before the next claim.
 */
function peaks(runs: readonly RunRecord[], user: string | ((run: RunRecord) => boolean)): Map<string, number> {
  const whose = typeof user === 'string' ? (run: RunRecord) => run.user === user : user;
  const events: { at: number; sign: 1 | -1; demands: Record<string, number> }[] = [];
  for (const run of runs.filter((r) => whose(r) && r.startedAt !== undefined)) {
    const demands = { running: 1, ...(run.resources as Record<string, number>) };
    events.push({ at: run.startedAt!, sign: 1, demands }, { at: run.endedAt!, sign: -1, demands });
  }
  events.sort((a, b) => a.at - b.at || a.sign - b.sign);
  const now = new Map<string, number>();
  const most = new Map<string, number>();
  for (const { sign, demands } of events) {
    for (const [name, amount] of Object.entries(demands)) {
      const held = Math.round(((now.get(name) ?? 0) + sign * amount) * 1e6) / 1e6;
      now.set(name, held);
      most.set(name, Math.max(most.get(name) ?? 0, held));
    }
  }
  return most;
}

describe('fitq quota', () => {
  it('sets, merges, lists and removes quotas; refuses what is no quota with a clear line (exit 2)', async () => {
    const queue = newQueue();
    expect(await fitqOk(queue, ['quota', 'ls'])).toBe('No quota is set (fitq quota set USER|--default|--label project=NAME running=N staged=N RESOURCE=AMOUNT...).');
    expect(await fitqOk(queue, ['quota', 'set', 'alice', 'gpu=2', 'running=4'])).toMatch(/^USER +QUOTA +USING\nalice +running=4 gpu=2 +running=0\/4 staged=0 gpu=0\/2$/);
    await fitqOk(queue, ['quota', 'set', 'alice', 'staged=1000', 'mem=64G']);
    await fitqOk(queue, ['quota', 'set', '--default', 'running=1']);
    const listed = JSON.parse(await fitqOk(queue, ['quota', 'ls', '--json'])) as unknown;
    expect(listed).toEqual([
      { default: true, quota: { running: 1, resources: {} } },
      { user: 'alice', quota: { running: 4, staged: 1000, resources: { gpu: 2, mem: 64e9 } }, usage: { running: 0, notEnded: 0, resources: {} } },
    ]);
    expect(await fitqOk(queue, ['quota', 'rm', 'alice', 'mem', 'staged'])).toBe("Removed mem, staged from alice's quota.");
    expect(await fitqOk(queue, ['quota', 'ls'])).toMatch(/\nalice +running=4 gpu=2 +/);
    expect(await fitqOk(queue, ['quota', 'rm', '--default'])).toBe('Removed the default quota.');

    const refusals: [string[], string][] = [
      [['quota', 'set', 'alice', 'gpu=x'], "Error: invalid resource spec 'gpu=x': expected a non-negative number like 2, 0.5, 100e9, 8G or 16Gi"],
      [['quota', 'set', 'gpu=2'], 'Error: name the user first (or --default, or --label project=NAME), got "gpu=2": fitq quota set USER|--default|--label project=NAME …'],
      [['quota', 'set', 'alice', 'running=1.5'], "Error: invalid 'running=1.5': running is a number of runs, a whole number"],
      [['quota', 'set', 'alice'], 'Error: name what the quota bounds, e.g. running=4 staged=1000 gpu=2'],
      [['quota', 'set', 'al ice', 'gpu=1'], "Error: invalid user 'al ice': a user name is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -)"],
      [['quota', 'set', 'alice', 'array.0123456789ab=2'], "Error: invalid 'array.0123456789ab': an array's limit is the array's (fitq pool set array.0123456789ab=N), not a user's"],
      [['quota', 'rm', 'bob'], "Error: no quota is set for 'bob'"],
      [['quota', 'rm', 'alice', 'license'], "Error: the quota of 'alice' bounds none of: license"],
      [['quota', 'rm'], 'Error: name the user (or --default, or --label project=NAME): fitq quota rm USER|--default|--label project=NAME …'],
      [['quota', 'set', '--label', 'team=a', 'gpu=1'], "Error: --label 'team=a': quotas are per user or per project, --label project=NAME"],
      [['quota', 'set', '--label', 'project=a b', 'gpu=1'], "Error: invalid label project='a b': a project is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -), as a user name"],
      [['quota', 'set', '--label', 'project=a', '--default', 'gpu=1'], 'Error: give --default or --label, not both: fitq quota set USER|--default|--label project=NAME …'],
      [['quota', 'rm', '--label', 'project=a'], "Error: no quota is set for 'project=a'"],
      [['stage', '--label', 'project=-x', '--', 'true'], "Error: invalid label project='-x': a project is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -), as a user name"],
    ];
    for (const [args, message] of refusals) {
      const result = await fitq(args, { queue });
      expect({ args, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ args, exitCode: 2, stderr: message });
    }
  });

  it('never lets a user hold more than their quota at any moment, across workers; runs over it wait and say why; nothing leaks', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await fitqOk(queue, ['quota', 'set', 'alice', 'gpu=2', 'running=3']);
    await fitqOk(queue, ['quota', 'set', '--default', 'running=2']);
    // Before any worker: the sweeps wait in the fit index, alice's first. Hers last
    // long enough (4 s at her quota) for a listing to see one wait on a loaded machine.
    const alice = [
      ...(await stageAsUser(queue, 'alice', ['-r', 'gpu=1', '--repeat', '8', '--', 'sleep', '1'])),
      ...(await stageAsUser(queue, 'alice', ['-r', 'gpu=0.5', '--repeat', '6', '--', 'sleep', '0.2'])),
    ];
    const bob = await stageAsUser(queue, 'bob', ['-r', 'gpu=1', '--repeat', '8', '--', 'sleep', '0.3']);
    const carol = await stageAsUser(queue, 'carol', ['--repeat', '4', '--', 'sleep', '0.2']);

    const workers = ['w1', 'w2'].map((name) => spawnCliWorker(queue, ['-r', 'gpu=4', '--name', name]));
    await workers[0]!.waitForMessage(/^Run .* started/);
    // While alice is at her quota, her next run says so (gpu or running: both are reached in turn).
    const why = await waitFor('a run of alice waiting for her quota', async () => {
      const { stdout } = await fitq(['runs', '--user', 'alice', '--status', 'staged'], { queue });
      return /waiting for quota: alice (uses gpu=\d(\.5)? of 2|runs 3 of 3 at once)/.exec(stdout)?.[0];
    });
    expect(why).toMatch(/^waiting for quota: alice/);

    for (const id of [...alice, ...bob, ...carol]) expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed' });
    const runs = (await client.listRuns({})).filter((run) => run.status === 'completed');
    expect(runs).toHaveLength(alice.length + bob.length + carol.length);
    // Held at most the quota, and the quota was reached (the test can fail).
    const a = peaks(runs, 'alice');
    expect(a.get('gpu')).toBe(2);
    expect(a.get('running')).toBeLessThanOrEqual(3);
    expect(peaks(runs, 'bob').get('running')).toBe(2);
    expect(peaks(runs, 'carol').get('running')).toBe(2);
    // Both workers ran runs (the quota is the namespace's, not a worker's).
    expect(new Set(runs.map((run) => run.worker))).toEqual(new Set(['w1', 'w2']));

    // Nothing is left held: the users hold nothing, the workers have their capacity back.
    const listed = JSON.parse(await fitqOk(queue, ['quota', 'ls', '--json'])) as { usage?: unknown }[];
    expect(listed[1]).toEqual({ user: 'alice', quota: { running: 3, resources: { gpu: 2 } }, usage: { running: 0, notEnded: 0, resources: {} } });
    const keys = namespaceKeys(queue);
    // (A user whose runs hold nothing has no usage key left.)
    expect(await client.redis.exists(...['alice', 'bob', 'carol'].map((user) => keys.userUsage(user)))).toBe(0);
    for (const name of ['w1', 'w2']) expect(await client.redis.hget(keys.worker(name).free, 'gpu')).toBe('4');
    for (const worker of workers) {
      worker.process.kill('SIGTERM');
      expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    }
  });

  it('holds at once for runs staged and running before it was set; removing it lets them start at once', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=8', '--name', 'w']);
    const first = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--repeat', '2', '--', 'sleep', '30']);
    for (const id of first) await worker.waitForMessage(`Run ${id} started`);
    // Two run already, and two more are staged (the queue paused) before the quota is set.
    await fitqOk(queue, ['pause']);
    const waiting = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--repeat', '2', '--', 'true']);
    await fitqOk(queue, ['quota', 'set', 'alice', 'running=2']);
    await fitqOk(queue, ['resume']);
    const bob = await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--', 'true']);
    expect(await client.waitForEnd(bob[0]!)).toMatchObject({ status: 'completed' });
    for (const id of waiting) {
      expect(await client.redis.hget(namespaceKeys(queue).run(id), 'status')).toBe('staged');
      expect((await fitq(['runs', 'show', id], { queue })).stdout).toMatch(/^reason: +waiting for quota: alice runs 2 of 2 at once$/m);
    }
    const other = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'true']);

    await fitqOk(queue, ['quota', 'rm', 'alice']);
    for (const id of [...waiting, ...other]) expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed' });
    await fitqOk(queue, ['cancel', ...first]);
    for (const id of first) expect(await client.waitForEnd(id)).toMatchObject({ status: 'canceled' });
    expect(await client.redis.exists(namespaceKeys(queue).userUsage('alice'))).toBe(0);
  });

  it("binds every user's runs of a project to the project's quota at any moment, besides their own; its staged cap refuses a stage; an update moves a run between projects", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await fitqOk(queue, ['quota', 'set', '--label', 'project=vision', 'gpu=2', 'staged=12']);
    const vision = ['--label', 'project=vision', '-r', 'gpu=1', '--repeat', '6', '--', 'sleep', '0.3'];
    const alice = await stageAsUser(queue, 'alice', vision);
    const bob = await stageAsUser(queue, 'bob', vision);
    const carol = await stageAsUser(queue, 'carol', ['-r', 'gpu=1', '--repeat', '4', '--', 'sleep', '0.3']);
    const refused = await fitq(['stage', '--label', 'project=vision', '--', 'true'], { queue, env: { FITQ_USER: 'carol' } });
    expect({ exitCode: refused.exitCode, stderr: refused.stderr }).toEqual({
      exitCode: 2,
      stderr: 'Error: quota: project=vision may have 12 runs staged or running at once (staged=12), has 12, and this stages 1: nothing was staged (fitq quota ls)',
    });
    // One of bob's runs moves to another project: vision counts it no more, so there is room for carol's.
    await fitqOk(queue, ['update', bob[0]!, '--label', 'project=nlp']);
    expect(JSON.parse(await fitqOk(queue, ['quota', 'ls', '--json']))).toEqual([
      { project: 'vision', quota: { staged: 12, resources: { gpu: 2 } }, usage: { running: 0, notEnded: 11, resources: {} } },
    ]);
    const late = await stageAsUser(queue, 'carol', ['--label', 'project=vision', '-r', 'gpu=1', '--', 'sleep', '0.3']);

    const workers = ['w1', 'w2'].map((name) => spawnCliWorker(queue, ['-r', 'gpu=4', '--name', name]));
    const why = await waitFor('a run of the project waiting for its quota', async () => {
      const { stdout } = await fitq(['runs', '--status', 'staged'], { queue });
      return /waiting for quota: project=vision uses gpu=2 of 2/.exec(stdout)?.[0];
    });
    expect(why).toBe('waiting for quota: project=vision uses gpu=2 of 2');
    for (const id of [...alice, ...bob, ...carol, ...late]) expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed' });
    const runs = (await client.listRuns({})).filter((run) => run.status === 'completed');
    // The project's runs, whoever staged them, held 2 GPUs at most, and reached it; runs outside it were not bound by it.
    expect(peaks(runs, (run) => run.labels.project === 'vision').get('gpu')).toBe(2);
    expect(peaks(runs, (run) => run.labels.project !== 'vision').get('gpu')).toBeGreaterThan(2);
    expect(JSON.parse(await fitqOk(queue, ['quota', 'ls', '--json']))).toEqual([
      { project: 'vision', quota: { staged: 12, resources: { gpu: 2 } }, usage: { running: 0, notEnded: 0, resources: {} } },
    ]);
    const keys = namespaceKeys(queue);
    expect(await client.redis.exists(keys.userUsage('project=vision'), keys.userUsage('project=nlp'), keys.userUsage('alice'))).toBe(0);
    for (const worker of workers) {
      worker.process.kill('SIGTERM');
      expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    }
  });

  it('refuses a stage past a staged quota whole (exit 2); runs that end make room', async () => {
    const queue = newQueue();
    await fitqOk(queue, ['quota', 'set', 'alice', 'staged=5']);
    const five = await stageAsUser(queue, 'alice', ['--repeat', '4', '--', 'true']);
    const refused = await fitq(['stage', '--repeat', '2', '--', 'true'], { queue, env: { FITQ_USER: 'alice' } });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe('Error: quota: alice may have 5 runs staged or running at once (staged=5), has 4, and this stages 2: nothing was staged (fitq quota ls)');
    // A batch staged in chunks (more than one script call) is refused whole, by its first chunk.
    const big = await fitq(['stage', '--repeat', '1200', '--', 'true'], { queue, env: { FITQ_USER: 'alice' } });
    expect(big.exitCode).toBe(2);
    expect(big.stderr).toMatch(/has 4, and this stages 1200: nothing was staged/);
    expect(JSON.parse(await fitqOk(queue, ['runs', '--json'])).runs).toHaveLength(4);
    // Another user is not bound by alice's quota.
    await stageAsUser(queue, 'bob', ['--repeat', '3', '--', 'true']);
    // Canceled (or ended) runs no longer count.
    await fitqOk(queue, ['cancel', five[0]!, five[1]!]);
    await stageAsUser(queue, 'alice', ['--repeat', '3', '--', 'true']);
    expect(JSON.parse(await fitqOk(queue, ['quota', 'ls', '--json']))).toMatchObject([{ user: 'alice', usage: { notEnded: 5 } }]);
    // Removed runs too.
    await fitqOk(queue, ['runs', 'rm', '--force', five[2]!]);
    await stageAsUser(queue, 'alice', ['--', 'true']);
  });

  it("forgets runs whose jobs BullMQ deleted (drained while staged, obliterated while running): they no longer count against the user", async () => {
    const queue = newQueue();
    const admin = await connectClient(queue);
    const alice = await connectClient(queue, redisUrl(), { user: 'alice' });
    await admin.setQuota({ user: 'alice' }, ['staged=3']);
    const scripts = new Scripts(admin.redis, admin.keys, 100);
    expect(await scripts.registerWorker({ name: 'w', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=1' })).toBe(true);
    const [running] = (await alice.stage({ command: ['true'], resources: 'cpu=1' })).runs;
    const claim = await scripts.claimRun('w', 'tok', 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: running!.id });
    await alice.stage({ command: ['true'], resources: 'cpu=1', repeat: 2 });
    await expect(alice.stage({ command: ['true'] })).rejects.toThrow('has 3, and this stages 1');

    // Drained from BullMQ while staged, then caught up with; obliterated under its worker, then ended by it.
    await openRunQueue(admin).drain();
    await admin.reconcile();
    await admin.redis.del(admin.keys.run(running!.id));
    const epoch = (claim as { epoch: string }).epoch;
    expect(await scripts.finishRun({ runId: running!.id, worker: 'w', token: 'tok', epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' })).toMatchObject({ outcome: 'movedOn' });
    expect(await admin.redis.exists(admin.keys.userUsage('alice'))).toBe(0);
    expect((await alice.stage({ command: ['true'], repeat: 3 })).runs).toHaveLength(3);
  });
});
