/**
 * What a claim costs, counted by Redis itself: the commands its script
 * runs (INFO commandstats, on a server the test has to itself), and claims
 * repeated while the worker's class catches up (`indexing`).
 */
import type { ClaimResult } from '../../src/queue/claim-reply.js';
import type { Scripts } from '../../src/queue/scripts.js';
import type { RedisConnection } from '../../src/redis/connection.js';

/** Claims until a reply other than `indexing`; gives it and how many `indexing` replies came first. */
export async function claimSettled(scripts: Scripts, worker = 'w'): Promise<{ result: ClaimResult; indexing: number }> {
  for (let indexing = 0; ; indexing++) {
    const result = await scripts.claimRun(worker, 'tok', 0);
    if (result.code !== 'indexing') return { result, indexing };
  }
}

/** The commands Redis ran while `act` did, scripts' inner commands counted, the script calls and the counting itself not. */
export async function commandsDuring(redis: RedisConnection, act: () => Promise<unknown>): Promise<number> {
  await redis.config('RESETSTAT');
  await act();
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const [, command, count] of stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    if (!['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'info', 'config'].includes(command!)) calls += Number(count);
  }
  return calls;
}
