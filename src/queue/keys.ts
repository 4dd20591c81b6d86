/**
 * A namespace's keys as TypeScript builds them (namespaceKeys), from the
 * one description of every key, KEY_LAYOUT (key-layout.ts, which the Lua
 * scripts' keys are built from too).
 */
import { validateKeyPrefix, validateQueueName } from '../model/names.js';
import { namespaceKey, RUN_QUEUE, type KeyName } from './key-layout.js';

export { KEY_LAYOUT, ORDER_BLOCK, RUN_QUEUE, isKeyName, keyPart, luaKeyExpression, namespaceKey, orderBlock, type KeyName } from './key-layout.js';

export const DEFAULT_PREFIX = 'fitq';
export const DEFAULT_QUEUE = 'default';

export interface NamespaceKeys {
  /** Prefix of every key in the namespace, e.g. `fitq:{default}:`. */
  readonly base: string;
  /** Counter giving each staged run its staging sequence number. */
  readonly seq: string;
  /** Zset of every run id, score 0: looked up by prefix with ZRANGE BYLEX. */
  readonly ids: string;
  /** Hash: group of demand shapes that have staged runs (their resource names) -> version. */
  readonly groups: string;
  /** Hash: batch being staged in chunks, not yet committed -> "deadline count" (see stageRuns-*.lua). */
  readonly batches: string;
  /** Hash: array id -> how many of its runs are stored (see stageRuns-*.lua); its limit is the pool resource `array.<id>`. */
  readonly arrays: string;
  /** Hash: `<array id>:open|ok|notok` -> how many of its runs are not ended, completed, ended otherwise; `<array id>:last` (see lua/includes/arrays/arrayTally.lua). */
  readonly arrayTally: string;
  /** Zset of live workers, scored by lease deadline (epoch ms). */
  readonly workers: string;
  /** Hash: run id of a blocked head -> the worker holding resources for it. */
  readonly holds: string;
  /** Hash: cluster-wide pool resource -> total amount. */
  readonly poolCapacity: string;
  /** Hash: cluster-wide pool resource -> amount reserved by running runs. */
  readonly poolUsed: string;
  /** Pub/sub channel for wake-ups and cancellations. */
  readonly events: string;
  /** Namespace settings (history retention). */
  readonly settings: string;
  /** List: ids of runs that ended without their worker (canceled while staged, lost), whose notification a worker sends (lua/includes/lifecycle/notifyOutbox.lua). */
  readonly notifyOutbox: string;
  /** Hash: how far fitq has reconciled its index with what BullMQ's API did to the queue. */
  readonly reconcile: string;
  /** Hash: run statistics (runs ended by status, re-staged, wait and duration buckets) for /metrics (see lua/includes/stats/runTimeBounds.lua). */
  readonly stats: string;
  /**
   * The namespace's BullMQ queue: `new Queue(queue.name, { prefix: queue.prefix })`
   * sees every run as a job (job id = run id).
   */
  readonly queue: {
    readonly prefix: string;
    readonly name: string;
    key(suffix: string): string;
    /** The Redis client name of a worker's connection, as BullMQ names its workers' (Queue.getWorkers, Bull Board). */
    workerClientName(worker: string): string;
  };
  /** A run: its BullMQ job hash. */
  run(runId: string): string;
  /** A run's output stream, next to its job. */
  runLog(runId: string): string;
  /** An ended run's short output, packed into one string (instead of the stream). */
  runPackedLog(runId: string): string;
  /** A run's earlier attempts (JSON per attempt), next to its job. */
  runAttempts(runId: string): string;
  /** Set: the runs that wait for this run (`fitq stage --after`). */
  dependents(runId: string): string;
  /** Set: the runs that wait for every run of this array (`fitq stage --after ARRAY`). */
  arrayDependents(arrayId: string): string;
  /** Hash: run id -> SSCAN cursor, for runs whose dependents are still to be judged (too many for one script call). */
  readonly dependentsPending: string;
  /** Set: the users that have a quota (`.default` too, when set). */
  readonly quotas: string;
  /** Hash: user -> registered public key. */
  readonly userKeys: string;
  /** Set: the registered users who are admins. */
  readonly admins: string;
  /** Hash: fair share's settings and users' shares. */
  readonly fairShare: string;
  /** Hash: user -> decayed usage. */
  readonly fairUsage: string;
  /** Hash: a user's quota (`.default`: everyone's without one). */
  quota(user: string): string;
  /** Hash: what a user's runs hold now. */
  userUsage(user: string): string;
  staged(shape: string): string;
  /** Zset: the runs whose staging number lies in this block (orderBlock), score = seq: the runs in staging order. */
  order(block: number): string;
  /** Zset: the shapes of a group (`cpu,mem`, or `none`) that have staged runs -> the score of their first run. */
  group(names: string): string;
  /** Hash: user -> how many shapes of theirs the group has. */
  groupUsers(names: string): string;
  worker(name: string): WorkerKeys;
}

export interface WorkerKeys {
  readonly info: string;
  readonly capacity: string;
  readonly free: string;
  readonly runs: string;
  /** GPU device index -> free share (1 = whole device). */
  readonly devices: string;
  /** Run id -> what its claim reserved (JSON), given back when it ends even if its job is gone. */
  readonly reserved: string;
  /** Its GPU probe's last reading (src/gpu/device-reading.ts). */
  readonly gpus: string;
}

export function namespaceKeys(queue: string = DEFAULT_QUEUE, prefix: string = DEFAULT_PREFIX): NamespaceKeys {
  validateQueueName(queue);
  validateKeyPrefix(prefix);
  const base = `${prefix}:{${queue}}:`;
  const key = (name: KeyName, part?: string) => namespaceKey(base, name, part);
  return {
    base,
    seq: key('seq'),
    ids: key('ids'),
    groups: key('groups'),
    batches: key('batches'),
    arrays: key('arrays'),
    arrayTally: key('arrayTally'),
    workers: key('workers'),
    holds: key('holds'),
    poolCapacity: key('poolCapacity'),
    poolUsed: key('poolUsed'),
    events: key('events'),
    settings: key('settings'),
    notifyOutbox: key('notifyOutbox'),
    reconcile: key('reconcile'),
    stats: key('stats'),
    queue: {
      prefix: `${prefix}:{${queue}}`,
      name: RUN_QUEUE,
      key: (suffix) => `${base}${RUN_QUEUE}:${suffix}`,
      workerClientName: (worker) => `${prefix}:{${queue}}:${Buffer.from(RUN_QUEUE).toString('base64')}:w:${worker}`,
    },
    run: (runId) => key('run', runId),
    runLog: (runId) => key('runLog', runId),
    runPackedLog: (runId) => key('runPackedLog', runId),
    runAttempts: (runId) => key('runAttempts', runId),
    dependents: (runId) => key('dependents', runId),
    arrayDependents: (arrayId) => key('arrayDependents', arrayId),
    dependentsPending: key('dependentsPending'),
    quotas: key('quotas'),
    userKeys: key('userKeys'),
    admins: key('admins'),
    fairShare: key('fairShare'),
    fairUsage: key('fairUsage'),
    quota: (user) => key('quota', user),
    userUsage: (user) => key('userUsage', user),
    staged: (shape) => key('staged', shape),
    order: (block) => key('order', String(block)),
    group: (names) => key('group', names),
    groupUsers: (names) => key('groupUsers', names),
    worker: (name) => ({
      info: key('worker', name),
      capacity: key('workerCapacity', name),
      free: key('workerFree', name),
      runs: key('workerRuns', name),
      devices: key('workerDevices', name),
      reserved: key('workerReserved', name),
      gpus: key('workerGpus', name),
    }),
  };
}
