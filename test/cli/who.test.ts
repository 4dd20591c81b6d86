/**
 * Who staged a run: every run records its stager (FITQ_USER, else the OS
 * user, and the host), `fitq runs` and `runs show` show it, and --user and
 * --mine select runs wherever runs are selected.
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { REJECTED_MISMATCH } from '../../src/security/signing.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';

async function stageAs(queue: string, user: string | undefined, command: string): Promise<string> {
  const result = await fitq(['stage', '--', 'echo', command], { queue, env: user === undefined ? {} : { FITQ_USER: user } });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

async function listed(queue: string, args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const result = await fitq(['runs', '--json', ...args], { queue, env });
  expect(result.exitCode, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { runs: { id: string }[] }).runs.map((run) => run.id);
}

describe('who staged a run', () => {
  it('records FITQ_USER, else the OS user, and the host; shows it; selects by it', async () => {
    const queue = newQueue();
    const alice = await stageAs(queue, 'alice', 'a');
    const bob = await stageAs(queue, 'bob', 'b');
    const me = await stageAs(queue, undefined, 'c');
    const json = await fitq(['runs', 'show', alice, '--json'], { queue });
    expect(JSON.parse(json.stdout)).toMatchObject({ id: alice, user: 'alice', stagedFrom: hostname() });
    expect((await fitq(['runs', 'show', alice], { queue })).stdout).toMatch(new RegExp(`^staged by: +alice@${hostname()}$`, 'm'));
    const table = (await fitq(['runs'], { queue })).stdout.split('\n');
    expect(table[0]).toMatch(/^ID +STATUS +USER +REQUIRES/);
    expect(table.find((line) => line.startsWith(bob))).toMatch(new RegExp(`^${bob} +staged +bob +`));
    expect(table.find((line) => line.startsWith(me))).toMatch(new RegExp(`^${me} +staged +${userInfo().username} +`));

    expect(await listed(queue, ['--user', 'alice'])).toEqual([alice]);
    expect(await listed(queue, ['--mine'], { FITQ_USER: 'bob' })).toEqual([bob]);
    expect(await listed(queue, ['--mine'])).toEqual([me]);
    expect(await listed(queue, ['--user', 'carol'])).toEqual([]);

    // Every command that selects runs takes them too.
    const dry = await fitq(['cancel', '--mine', '--dry-run', '--json'], { queue, env: { FITQ_USER: 'alice' } });
    expect((JSON.parse(dry.stdout) as { id: string }[]).map((run) => run.id)).toEqual([alice]);
    const canceled = await fitq(['cancel', '--user', 'bob'], { queue });
    expect(canceled.exitCode, canceled.stderr).toBe(0);
    expect(await listed(queue, ['--status', 'canceled'])).toEqual([bob]);
    const none = await fitq(['hold', '--user', 'carol'], { queue });
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toBe('No runs match --status staged --user carol: nothing to hold.');
  });

  it('refuses a user name that is none, and --mine with --user (exit 2)', async () => {
    const queue = newQueue();
    const bad = await fitq(['stage', '--', 'true'], { queue, env: { FITQ_USER: 'al ice' } });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toBe("Error: invalid FITQ_USER 'al ice': a user name is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -)");
    const both = await fitq(['runs', '--mine', '--user', 'bob'], { queue });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toBe('Error: --mine selects your own runs: it takes no --user bob');
    const flag = await fitq(['cancel', '--user', '-bob'], { queue });
    expect(flag.exitCode).toBe(2);
  });

  it("keeps who staged a run through a restart, and a signed run's stager cannot be changed", async () => {
    const queue = newQueue();
    const secret = `who-secret-${randomBytes(8).toString('hex')}`;
    const alice = await connectClient(queue, undefined, { user: 'alice', secret });
    const [kept, forged] = (await alice.stage({ command: ['true'], repeat: 2 })).runs.map((run) => run.id);
    expect((await alice.getRun(kept!)).user).toBe('alice');
    // Who staged it is not in its data (a short run's data stays within a listpack value) but beside it, and signed.
    await alice.redis.hset(alice.keys.run(forged!), 'user', 'bob');
    const { worker } = await startTestWorker(queue, { runOnce: true, secret });
    await worker.done;
    expect(await alice.getRun(kept!)).toMatchObject({ status: 'completed', user: 'alice' });
    expect(await alice.getRun(forged!)).toMatchObject({ status: 'rejected', reason: REJECTED_MISMATCH });
    const restarted = await fitq(['restart', kept!], { queue, env: { FITQ_USER: 'carol' } });
    expect(restarted.exitCode, restarted.stderr).toBe(0);
    expect(await alice.getRun(kept!)).toMatchObject({ status: 'staged', user: 'alice', stagedFrom: hostname() });
  });
});
