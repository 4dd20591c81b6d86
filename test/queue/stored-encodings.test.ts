/**
 * Runs stored by the build before job data left its defaults out (every
 * default written: `"shell":false,"cwd":"","env":{}`...), and before a
 * committed batch's id was taken out of its runs, are still read, shown,
 * claimed, verified and run as they were: namespaces hold them.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { openRunQueue } from '../support/bullmq.js';
import { connectClient, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';

const SECRET = `fitq-test-secret-${randomBytes(12).toString('hex')}`;

const ownClients: FitqClient[] = [];
afterEach(async () => {
  await Promise.all(ownClients.splice(0).map((client) => client.close()));
});

/** The job data the previous build wrote for a run of `printf hi` (-r cpu=1, cwd /tmp), defaults and all. */
function previousBuildData(signature: string | undefined): string {
  const signed = signature === undefined ? '' : `,"signature":"${signature}"`;
  return `{"command":["printf","hi"],"shell":false,"cwd":"/tmp","env":{},"labels":{},"resources":"cpu=1","priority":0${signed}}`;
}

describe('a run stored by the previous build', () => {
  it('reads, shows, claims, verifies and runs as before (signed, with a committed batch id left in it)', async () => {
    const queue = newQueue();
    const stager = await FitqClient.connect({ redisUrl: redisUrl(), queue, secret: SECRET });
    ownClients.push(stager);
    const client = await connectClient(queue);
    const [staged] = (await stager.stage({ command: ['printf', 'hi'], resources: 'cpu=1', cwd: '/tmp' })).runs;
    const id = staged!.id;
    const key = client.keys.run(id);
    const signature = String(JSON.parse(String(await client.redis.hget(key, 'data'))).signature);
    expect(signature).toMatch(/^v1:[0-9a-f]{64}$/);
    const shownBefore = await client.getRun(id);

    // As the previous build left it: both copies with every default, and the id of its (committed) batch.
    const old = previousBuildData(signature);
    await client.redis.hset(key, 'data', old, 'runData', old, 'batch', 'a1b2c3d4e5f60718');
    expect(await client.getRun(id)).toEqual(shownBefore);
    expect((await openRunQueue(client).getJob(id))!.data).toEqual(JSON.parse(old));

    // A worker with the secret verifies it and runs it.
    const { worker } = await startTestWorker(queue, { secret: SECRET, runOnce: true, resources: 'cpu=1' });
    await worker.done;
    expect(await client.getRun(id)).toMatchObject({ status: 'completed', exitCode: 0, command: ['printf', 'hi'], cwd: '/tmp', shell: false, env: {}, labels: {} });
    expect((await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['hi']);
    // Left as it was stored.
    expect(await client.redis.hmget(key, 'data', 'runData')).toEqual([old, old]);
  });

  it('with only `data` (before fitq kept its own copy) and every default, is shown and run the same as one staged now', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [staged] = (await client.stage({ command: ['printf', 'hi'], resources: 'cpu=1', cwd: '/tmp' })).runs;
    const key = client.keys.run(staged!.id);
    const shownBefore = await client.getRun(staged!.id);
    await client.redis.hdel(key, 'runData');
    await client.redis.hset(key, 'data', previousBuildData(undefined));
    expect(await client.getRun(staged!.id)).toEqual(shownBefore);
    const { worker } = await startTestWorker(queue, { runOnce: true, resources: 'cpu=1' });
    await worker.done;
    expect(await client.getRun(staged!.id)).toMatchObject({ status: 'completed', exitCode: 0 });
  });
});
