/**
 * Rights over signed runs: a run its user signed (`fitq keys`) is canceled,
 * held, released, updated, restarted or removed only at a request signed by
 * that user or an admin (`fitq keys add --admin`). The CLI refuses anyone
 * else in one line saying who may (exit 2) and changes nothing; requests
 * forged past the CLI (the scripts called by hand, naming someone else) are
 * refused by a real `fitq worker --require-signed`: a forged cancel does not
 * stop the run, a run released by a forged request never starts, and a
 * request replayed is refused by the script.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverTimeMicros } from '../../src/model/liveness.js';
import { Scripts } from '../../src/queue/scripts.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

interface Person {
  user: string;
  keyFile: string;
}

const as = (person: Person, user = person.user) => ({ FITQ_USER: user, FITQ_KEY_FILE: person.keyFile });

/** People with keys made by `fitq keys init` and registered by `fitq keys add` (with `--admin` for those named in `admins`). */
async function registered(queue: string, users: string[], admins: string[] = []): Promise<Record<string, Person>> {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-requests-'));
  const people: Record<string, Person> = {};
  for (const user of users) {
    const person = { user, keyFile: join(dir, `${user}.pem`) };
    const init = await fitq(['keys', 'init'], { queue, env: as(person) });
    const key = /^Public key: (ed25519:\S+)$/m.exec(init.stdout)![1]!;
    const add = await fitq(['keys', 'add', user, key, ...(admins.includes(user) ? ['--admin'] : [])], { queue });
    expect(add.exitCode, add.stderr).toBe(0);
    people[user] = person;
  }
  return people;
}

async function stageAs(queue: string, person: Person, args: string[]): Promise<string> {
  const result = await fitq(['stage', ...args], { queue, env: as(person) });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

const whoMay = (id: string, verb: string, requester: string) =>
  `run '${id}' is signed by the key of 'alice': only alice or an admin may ${verb} it, with their own key (${requester})`;

/** A request naming `by` that no key signed: what someone could write past the CLI. */
const forged = (by: string, at: string) => `${by} ${at} ed25519:${'A'.repeat(86)}`;

describe('signed requests', () => {
  it("only the run's user or an admin may cancel, hold, release, update, restart or remove a signed run; anyone else is told who may (exit 2)", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { alice, bob, carol } = await registered(queue, ['alice', 'bob', 'carol'], ['carol']);
    expect(JSON.parse((await fitq(['keys', 'ls', '--json'], { queue })).stdout)).toMatchObject([
      { user: 'alice', admin: false }, { user: 'bob', admin: false }, { user: 'carol', admin: true },
    ]);
    const staged = await stageAs(queue, alice!, ['-r', 'cpu=64', '--label', 'team=a', '--', 'true']);
    const held = await stageAs(queue, alice!, ['--hold', '-r', 'cpu=64', '--', 'true']);
    const ended = await stageAs(queue, alice!, ['--', 'true']);
    await fitq(['cancel', ended], { queue, env: as(alice!) });
    // Every field of their jobs, to show a refusal changed nothing.
    const hashes = () => Promise.all([staged, held, ended].map((id) => client.redis.hgetall(client.keys.run(id))));
    const before = await hashes();

    // Bob with his own key, then passing himself off as alice with his key, then as alice with no key at all.
    const tries: [Record<string, string>, string][] = [
      [as(bob!), "you are 'bob'"],
      [as(bob!, 'alice'), "your key is not the one registered for 'alice'"],
      [{ FITQ_USER: 'alice' }, "you, 'alice', have no key: fitq keys init"],
    ];
    for (const [env, requester] of tries) {
      const attempts: [string[], string][] = [
        [['cancel', staged], `Run ${staged} not canceled: ${whoMay(staged, 'cancel', requester)}`],
        [['hold', staged], `Run ${staged} not held: ${whoMay(staged, 'hold', requester)}`],
        [['release', held], `Run ${held} not released: ${whoMay(held, 'release', requester)}`],
        [['restart', ended], `Run ${ended} not restarted: ${whoMay(ended, 'restart', requester)}`],
      ];
      for (const [args, line] of attempts) {
        const result = await fitq(args, { queue, env });
        expect({ args, env, exitCode: result.exitCode, stdout: result.stdout.trim() }).toEqual({ args, env, exitCode: 2, stdout: line });
      }
      const label = await fitq(['update', staged, '--label', 'team=b'], { queue, env });
      expect({ env, exitCode: label.exitCode, stderr: label.stderr }).toEqual({ env, exitCode: 2, stderr: `Error: ${whoMay(staged, 'update', requester)}: not updated` });
      const remove = await fitq(['runs', 'rm', ended], { queue, env });
      expect({ env, exitCode: remove.exitCode, stderr: remove.stderr }).toEqual({ env, exitCode: 2, stderr: `Error: ${whoMay(ended, 'remove', requester)}` });
    }
    expect(await hashes()).toEqual(before);

    // The admin may; so may alice.
    expect((await fitq(['release', held], { queue, env: as(carol!) })).stdout.trim()).toBe(`Run ${held} released: it may start now`);
    expect((await fitq(['hold', held], { queue, env: as(alice!) })).stdout.trim()).toBe(`Run ${held} held (fitq release ${held} to let it start)`);
    const relabeled = await fitq(['update', staged, '--label', 'team=c'], { queue, env: as(carol!) });
    expect(relabeled.exitCode, relabeled.stderr).toBe(0);
    expect((await client.getRun(staged)).labels).toEqual({ team: 'c' });
    expect((await fitq(['restart', ended], { queue, env: as(alice!) })).exitCode).toBe(0);
    expect((await fitq(['cancel', staged, ended], { queue, env: as(carol!) })).exitCode).toBe(0);
    expect((await fitq(['runs', 'rm', staged, ended, held], { queue, env: as(alice!) })).stdout.trim()).toBe('Removed 3 runs.');

    // An admin no longer: refused as anyone else.
    const carolKey = (await client.listUserKeys()).find(({ user }) => user === 'carol')!.key;
    expect((await fitq(['keys', 'add', 'carol', carolKey, '--no-admin'], { queue })).stdout.trim()).toBe('Registered the key of carol.');
    const again = await stageAs(queue, alice!, ['-r', 'cpu=64', '--', 'true']);
    expect((await fitq(['cancel', again], { queue, env: as(carol!) })).exitCode).toBe(2);
    await client.close();
  });

  it('a worker with --require-signed refuses forged requests: a forged cancel leaves the run running, a forged release never starts it; a replay is refused', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const now = async () => serverTimeMicros(await client.redis.time());
    const { alice, carol } = await registered(queue, ['alice', 'carol'], ['carol']);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-requests-runs-'));
    const marker = (name: string) => join(dir, name);
    const worker = spawnCliWorker(queue, ['--require-signed', '-r', 'cpu=2', '--name', 'strict']);

    // A forged cancel (alice named, no key of hers) is admitted by the script but refused by the worker: the run runs on,
    // whether it comes once the run's process started or between its claim and its start.
    const long = await stageAs(queue, alice!, ['-r', 'cpu=1', '--', 'sleep', '600']);
    await waitFor('the long run running', async () => (await client.getRun(long)).status === 'running');
    expect(await scripts.cancelRun(long, forged('alice', await now()))).toMatchObject({ outcome: 'requested' });
    await worker.waitForMessage(`Refused to cancel run ${long}: cancel by alice: not signed by the key registered for 'alice'`);
    const hash = await client.redis.hgetall(client.keys.run(long));
    expect(hash).toMatchObject({ status: 'running', refusedWhy: "cancel by alice: not signed by the key registered for 'alice'" });
    expect(hash.cancelRequested).toBeUndefined();
    // runs show says so.
    expect((await fitq(['runs', 'show', long], { queue })).stdout).toMatch(
      /^last request: +cancel by alice, .+ \(refused by its worker: cancel by alice: not signed by the key registered for 'alice'\)$/m,
    );
    // Naming someone who is neither alice nor an admin is refused by the script itself.
    expect(await scripts.cancelRun(long, forged('bob', await now()))).toMatchObject({ outcome: 'notYours' });
    // The admin's real cancel stops it.
    expect((await fitq(['cancel', long], { queue, env: as(carol!) })).exitCode).toBe(0);
    expect(await client.waitForEnd(long)).toMatchObject({ status: 'canceled', lastRequest: { op: 'cancel', by: 'carol' } });

    // A forged release of alice's held run: released in Redis, rejected by the worker, never run.
    const held = await stageAs(queue, alice!, ['--hold', '--', 'touch', marker('released')]);
    expect(await scripts.setHeld('release', [[held, forged('alice', await now())]])).toEqual([{ outcome: 'released', detail: 'staged' }]);
    expect(await client.waitForEnd(held)).toMatchObject({
      status: 'rejected',
      reason: "rejected: the release that let it start is not proven (release by alice: not signed by the key registered for 'alice')",
    });
    expect(existsSync(marker('released'))).toBe(false);

    // A real request replayed later is refused: it is not later than the last one the run took.
    const parked = await stageAs(queue, alice!, ['--hold', '-r', 'cpu=64', '--', 'true']);
    await fitq(['release', parked], { queue, env: as(alice!) });
    const release = (await client.redis.hget(client.keys.run(parked), 'lastRequest'))!;
    await fitq(['hold', parked], { queue, env: as(alice!) });
    const replayed = release.split(' ').slice(1).join(' ');
    expect(await scripts.setHeld('release', [[parked, replayed]])).toEqual([{ outcome: 'notYours', detail: 'alice' }]);
    expect((await client.getRun(parked)).status).toBe('held');

    // A restart --cascade by alice: the dependent restarted with it is proven by her request for the run it depends on.
    const first = await stageAs(queue, alice!, ['--', 'test', '-f', marker('ready')]);
    const dependent = await stageAs(queue, alice!, ['--after', first, '--', 'touch', marker('dependent')]);
    expect(await client.waitForEnd(first)).toMatchObject({ status: 'failed' });
    expect(await client.waitForEnd(dependent)).toMatchObject({ status: 'canceled' });
    writeFileSync(marker('ready'), '');
    const restarted = await fitq(['restart', '--cascade', first], { queue, env: as(alice!) });
    expect(restarted.stdout).toContain(`Run ${dependent} restarted (cascade)`);
    expect(await client.waitForEnd(first)).toMatchObject({ status: 'completed' });
    expect(await client.waitForEnd(dependent)).toMatchObject({ status: 'completed' });
    expect(existsSync(marker('dependent'))).toBe(true);

    worker.process.kill('SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    await client.close();
  });
});
