/**
 * What a worker with --require-signed proves before it starts a signed run:
 * the release or restart that let it start (`startRequest`), never a cancel
 * or hold recorded after it (`lastRequest`). A forged cancel that lands
 * between a run's claim and its start must not keep it from starting, and
 * a forged release must not hide behind a later request. Real Redis, real
 * keys and signatures; the requests are written by the scripts as fitq's
 * commands write them.
 */
import { describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverTimeMicros } from '../../src/model/liveness.js';
import { Scripts } from '../../src/queue/scripts.js';
import { signRequest } from '../../src/security/request-signature.js';
import { formatPublicKey } from '../../src/security/user-keys.js';
import { requestCheck } from '../../src/worker/request-check.js';
import { connectClient, newQueue } from '../support/fitq.js';

describe('request check', () => {
  it('proves the release that let a run start, not a cancel recorded after it', async () => {
    const queue = newQueue();
    const alice = generateKeyPairSync('ed25519');
    const keyFile = join(mkdtempSync(join(tmpdir(), 'fitq-request-check-')), 'alice.pem');
    writeFileSync(keyFile, alice.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
    // Alice's client: the runs it stages are signed with her key.
    const client = await connectClient(queue, undefined, { user: 'alice', keyFile });
    await client.addUserKey('alice', formatPublicKey(alice.publicKey));
    const scripts = new Scripts(client.redis, client.keys, 100);
    const check = requestCheck(client.redis, client.keys, scripts);
    const now = async () => serverTimeMicros(await client.redis.time());
    const real = async (op: 'release' | 'hold', runId: string) => signRequest(alice.privateKey, client.keys.base, op, runId, 'alice', await now());
    const forged = async () => `alice ${await now()} ed25519:${'A'.repeat(86)}`;
    // A held run of alice's (requests are recorded on it while it waits).
    const signedRun = async () => (await client.stage({ command: ['true'], resources: 'cpu=64', hold: true })).runs[0]!.id;

    // Released by alice, then a forged cancel recorded before its start: it starts.
    const released = await signedRun();
    expect(await scripts.setHeld('release', [[released, await real('release', released)]])).toMatchObject([{ outcome: 'released' }]);
    await client.redis.hset(client.keys.run(released), 'lastRequest', `cancel ${await forged()}`);
    expect(await check.startRefusal(released, 'alice')).toBeUndefined();
    // The cancel itself is refused, and said so on the run.
    expect(await check.cancelRefusal(released, 'alice')).toBe("cancel by alice: not signed by the key registered for 'alice'");
    expect(await client.redis.hget(client.keys.run(released), 'refusedWhy')).toBe("cancel by alice: not signed by the key registered for 'alice'");

    // Released by a forged request, then held and released... by requests recorded after it: still refused until a real release.
    const forgedRelease = await signedRun();
    expect(await scripts.setHeld('release', [[forgedRelease, await forged()]])).toMatchObject([{ outcome: 'released' }]);
    expect(await check.startRefusal(forgedRelease, 'alice')).toBe(
      "rejected: the release that let it start is not proven (release by alice: not signed by the key registered for 'alice')",
    );
    expect(await scripts.setHeld('hold', [[forgedRelease, await real('hold', forgedRelease)]])).toMatchObject([{ outcome: 'held' }]);
    expect(await check.startRefusal(forgedRelease, 'alice')).toMatch(/^rejected: the release that let it start is not proven/);
    expect(await scripts.setHeld('release', [[forgedRelease, await real('release', forgedRelease)]])).toMatchObject([{ outcome: 'released' }]);
    expect(await check.startRefusal(forgedRelease, 'alice')).toBeUndefined();

    // Never released nor restarted: nothing to prove.
    expect(await check.startRefusal(await signedRun(), 'alice')).toBeUndefined();
    await client.close();
  });
});
