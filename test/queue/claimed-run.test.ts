/**
 * Scripts.claimRun decodes the claim once into a typed ClaimedRun
 * (model/claimed-run.ts): the run, its demands, and what the claim gave it
 * (epoch, worker share, pool share, GPU devices with their share, deadline),
 * each as the claim wrote it into the run's hash.
 */
import { describe, expect, it } from 'vitest';
import { MICROS_PER_UNIT } from '../../src/resources/amount.js';
import { parseStoredResources } from '../../src/resources/spec.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ClaimResult } from '../../src/queue/claim-reply.js';
import { connectClient, newQueue } from '../support/fitq.js';

const claimed = (result: ClaimResult) => {
  if (result.code !== 'claimed') throw new Error(`expected a claim, got ${result.code}`);
  return result.claim;
};

describe('claimRun decodes the claim once', () => {
  it('gives the run, its demands, and the shares, devices and deadline the claim recorded', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, client.logMaxLines);
    await client.setPool('license=2');
    const { runs } = await client.stage({
      command: ['python', 'train.py'], resources: 'gpu=0.5 mem=8G license=1', gpus: '1', timeLimit: '2h', timeSignal: 'SIGUSR1@2m',
    });
    const id = runs[0]!.id;
    expect(await scripts.registerWorker({ name: 'w', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'gpu=2 mem=16000000000', devices: [0, 1] })).toBe(true);

    const claim = claimed(await scripts.claimRun('w', 'tok', 0));
    const hash = await client.redis.hgetall(client.keys.run(id));
    expect(claim).toMatchObject({ runId: id, epoch: '1', pinnedGpus: [1], devices: [1], deviceShare: MICROS_PER_UNIT / 2n, stagedTimeLimit: 7_200_000 });
    expect(claim.demands).toEqual(parseStoredResources('gpu=0.5 license=1 mem=8000000000'));
    expect(claim.reserved).toEqual(parseStoredResources(hash.reserved));
    expect(claim.reserved).toEqual(parseStoredResources('gpu=0.5 mem=8000000000'));
    expect(claim.pooled).toEqual(parseStoredResources('license=1'));
    expect(claim.deadline).toBe(Number(hash.deadline));
    expect(claim.run).toMatchObject({ id, status: 'running', command: ['python', 'train.py'], requires: 'gpu=0.5 mem=8G license=1', worker: 'w', timeSignal: 'SIGUSR1@2m', timeLimit: 7_200_000 });
    expect(claim.run).toEqual(await client.getRun(id).then(({ attempts: _attempts, workerResponding: _responding, dependents: _dependents, ...run }) => run));
    await scripts.deregisterWorker('w', 'tok');
  });
});
