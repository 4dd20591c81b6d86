/**
 * Proven identities: each user signs their runs with their own Ed25519 key
 * (`fitq keys init`), an admin registers its public half (`fitq keys add`),
 * and a real `fitq worker --require-signed` runs only runs their user's
 * registered key signed: a run passed off as someone else's (FITQ_USER
 * alone, or another's key), altered in Redis, or of a user with no key is
 * rejected with why, never run, and the worker carries on. Commands that
 * must never run would leave a marker file.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { alterRunData, connectClient, fitq, newQueue } from '../support/fitq.js';

/** A user of the test: their name and where their key file lives. */
interface Person {
  user: string;
  keyFile: string;
}

function people(...users: string[]): Person[] {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-keys-'));
  return users.map((user) => ({ user, keyFile: join(dir, `${user}.pem`) }));
}

const as = (person: Person, user = person.user) => ({ FITQ_USER: user, FITQ_KEY_FILE: person.keyFile });

/** `fitq keys init` for a person: their public key. */
async function keysInit(queue: string, person: Person): Promise<string> {
  const result = await fitq(['keys', 'init'], { queue, env: as(person) });
  expect(result.exitCode, result.stderr).toBe(0);
  const key = /^Public key: (ed25519:\S+)$/m.exec(result.stdout)![1]!;
  expect(result.stdout).toContain(`An admin registers it: fitq keys add ${person.user} ${key}`);
  return key;
}

async function stageAs(queue: string, person: Person, args: string[], user?: string): Promise<string> {
  const result = await fitq(['stage', ...args], { queue, env: as(person, user) });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('proven identities', () => {
  it('keys init, show, add, ls and rm; what is no key is refused with a clear line (exit 2)', async () => {
    const queue = newQueue();
    const [alice] = people('alice');
    const key = await keysInit(queue, alice!);
    expect(statSync(alice!.keyFile).mode & 0o777).toBe(0o600);
    expect((await fitq(['keys', 'show'], { queue, env: as(alice!) })).stdout.trim()).toBe(key);
    const again = await fitq(['keys', 'init'], { queue, env: as(alice!) });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toBe(`Error: a key already exists at '${alice!.keyFile}': fitq keys init --force replaces it (its runs' signatures then no longer match a registered key)`);

    expect((await fitq(['keys', 'ls'], { queue })).stdout.trim()).toBe('No key is registered (fitq keys init, then fitq keys add USER KEY).');
    expect((await fitq(['keys', 'add', 'alice', key], { queue })).stdout.trim()).toBe('Registered the key of alice.');
    expect(JSON.parse((await fitq(['keys', 'ls', '--json'], { queue })).stdout)).toEqual([{ user: 'alice', key, admin: false }]);
    expect((await fitq(['keys', 'rm', 'alice'], { queue })).stdout.trim()).toBe('Removed the key of alice.');

    const garbage = join(mkdtempSync(join(tmpdir(), 'fitq-keys-')), 'junk.pem');
    writeFileSync(garbage, 'not a key\n');
    const refusals: [string[], Record<string, string>, string][] = [
      [['keys', 'add', 'alice', 'ssh-ed25519 AAAA'], {}, "Error: invalid public key 'ssh-ed25519 AAAA': expected ed25519: and 43 base64url characters, as fitq keys init prints it"],
      [['keys', 'add', 'al ice', key], {}, "Error: invalid user 'al ice': a user name is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -)"],
      [['keys', 'rm', 'bob'], {}, "Error: no key is registered for 'bob'"],
      [['keys', 'show'], { FITQ_KEY_FILE: `${garbage}.missing` }, `Error: no key at '${garbage}.missing': fitq keys init makes one`],
      [['stage', '--', 'true'], { FITQ_KEY_FILE: `${garbage}.missing` }, `Error: no key at '${garbage}.missing' (FITQ_KEY_FILE): fitq keys init makes one`],
      [['stage', '--', 'true'], { FITQ_KEY_FILE: garbage }, `Error: key file '${garbage}' holds no private key (fitq keys init makes one)`],
    ];
    for (const [args, env, message] of refusals) {
      const result = await fitq(args, { queue, env });
      expect({ args, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ args, exitCode: 2, stderr: message });
    }
    expect(JSON.parse((await fitq(['runs', '--json'], { queue })).stdout).runs).toEqual([]);
  });

  it('a worker with --require-signed runs only runs their user signed; forged, altered and unregistered ones are rejected, never run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [alice, mallory, bob] = people('alice', 'mallory', 'bob');
    await fitq(['keys', 'add', 'alice', await keysInit(queue, alice!)], { queue });
    await fitq(['keys', 'add', 'mallory', await keysInit(queue, mallory!)], { queue });
    await keysInit(queue, bob!); // never registered
    const dir = mkdtempSync(join(tmpdir(), 'fitq-keys-runs-'));
    const marker = (name: string) => join(dir, name);

    const signed = await stageAs(queue, alice!, ['--', 'sh', '-c', `echo alice > ${marker('alice')}`]);
    // FITQ_USER alone names alice; it proves nothing.
    const bare = (await fitq(['stage', '--', 'touch', marker('bare')], { queue, env: { FITQ_USER: 'alice' } })).stdout.trim();
    const forged = await stageAs(queue, mallory!, ['--', 'touch', marker('forged')], 'alice');
    const altered = await stageAs(queue, alice!, ['--', 'true']);
    await alterRunData(client, altered, (data) => (data.command = ['touch', marker('altered')]));
    const unregistered = await stageAs(queue, bob!, ['--', 'touch', marker('bob')]);
    const malloryOwn = await stageAs(queue, mallory!, ['--', 'true']);

    const worker = spawnCliWorker(queue, ['--require-signed', '-r', 'cpu=1', '--name', 'strict']);
    await worker.waitForMessage("Runs must be signed by their user's registered key (--require-signed): others are rejected");
    expect(await client.waitForEnd(signed)).toMatchObject({ status: 'completed', user: 'alice' });
    expect(readFileSync(marker('alice'), 'utf8')).toBe('alice\n');
    expect(await client.waitForEnd(malloryOwn)).toMatchObject({ status: 'completed', user: 'mallory' });
    const reasons: [string, string][] = [
      [bare, 'rejected: run is not signed by its user (this worker requires signed runs: fitq keys init)'],
      [forged, "rejected: not signed by the key registered for 'alice' (the run was altered, or signed by someone else)"],
      [altered, "rejected: not signed by the key registered for 'alice' (the run was altered, or signed by someone else)"],
      [unregistered, "rejected: no key is registered for 'bob' (an admin registers it: fitq keys add bob PUBLIC_KEY)"],
    ];
    for (const [id, reason] of reasons) expect(await client.waitForEnd(id)).toMatchObject({ status: 'rejected', reason });
    for (const name of ['bare', 'forged', 'altered', 'bob']) expect(existsSync(marker(name))).toBe(false);

    // Alice edits her own run (signed anew with her key); mallory cannot edit it.
    const held = await stageAs(queue, alice!, ['--hold', '--', 'sh', '-c', `echo edited > ${marker('edited')}`]);
    const refused = await fitq(['update', held, '--priority', '5'], { queue, env: as(mallory!) });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe(`Error: run '${held}' is signed by the key of 'alice': only alice, with that key, may edit it`);
    const edited = await fitq(['update', held, '--priority', '5'], { queue, env: as(alice!) });
    expect(edited.exitCode, edited.stderr).toBe(0);
    await fitq(['release', held], { queue, env: as(alice!) });
    expect(await client.waitForEnd(held)).toMatchObject({ status: 'completed', priority: 5 });
    expect(readFileSync(marker('edited'), 'utf8')).toBe('edited\n');

    worker.process.kill('SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
  });
});
