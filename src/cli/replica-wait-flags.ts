/** The flags of the commands that write runs and claims (`stage`, `worker`): how many replicas must confirm those writes. */
import { Flags } from '@oclif/core';
import { parseReplicaWait, type ReplicaWait } from '../redis/replica-wait.js';

export const replicaWaitFlags = {
  'redis-wait-replicas': Flags.string({
    summary: 'Replicas that must confirm each claim before its run starts, each end, and staged runs before their ids are printed (Redis WAIT); 0 = none.',
    description:
      "Default: FITQ_REDIS_WAIT_REPLICAS, else 0. With the server's min-replicas-to-write, a failover then loses no claim and no staged run (docs/high-availability.md says what it costs and what remains possible without it).",
    helpGroup: 'CONNECTION',
  }),
  'redis-wait-timeout': Flags.string({
    summary: 'With --redis-wait-replicas: how long one WAIT blocks at most (default: FITQ_REDIS_WAIT_TIMEOUT, else 2s).',
    helpGroup: 'CONNECTION',
  }),
};

/** The setting from the flags, else the environment. */
export function replicaWaitOf(flags: { 'redis-wait-replicas'?: string | undefined; 'redis-wait-timeout'?: string | undefined }): ReplicaWait | undefined {
  return parseReplicaWait(
    flags['redis-wait-replicas'] ?? (process.env.FITQ_REDIS_WAIT_REPLICAS || undefined),
    flags['redis-wait-timeout'] ?? (process.env.FITQ_REDIS_WAIT_TIMEOUT || undefined),
  );
}
