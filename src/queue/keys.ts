/**
 * Every Redis key fitq uses, built in one place. All keys of a namespace share
 * the hash tag `{queue}`, so each Lua script touches a single cluster slot.
 * docs/redis-keys.md describes each of them.
 */
import { validateKeyPrefix, validateQueueName } from './names.js';

export interface NamespaceKeys {
  /** Prefix of every key in the namespace, e.g. `fitq:{default}:`. */
  readonly base: string;
  /** Counter giving each staged run its staging sequence number. */
  readonly seq: string;
  /** Zset of every run id, score 0: looked up by prefix with ZRANGE BYLEX. */
  readonly ids: string;
  /** Hash: group of demand shapes that have staged runs (their resource names) -> version. */
  readonly groups: string;
  /** Hash: batch being staged in chunks, not yet committed -> "deadline count" (see stageRuns-3.lua). */
  readonly batches: string;
  /** Hash: array id -> how many of its runs are stored (see stageRuns-3.lua); its limit is the pool resource `array.<id>`. */
  readonly arrays: string;
  /** Hash: `<array id>:open|ok|notok` -> how many of its runs are not ended, completed, ended otherwise; `<array id>:last` (see lua/includes/arrayTally.lua). */
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
  /** List: ids of runs that ended without their worker (canceled while staged, lost), whose notification a worker sends (notifyOutbox.lua). */
  readonly notifyOutbox: string;
  /** Hash: how far fitq has reconciled its index with what BullMQ's API did to the queue. */
  readonly reconcile: string;
  /** Hash: run statistics (runs ended by status, re-staged, wait and duration buckets) for /metrics (see includes/runTimeBounds.lua). */
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
  staged(shape: string): string;
  /** Zset: the shapes of a group (`cpu,mem`, or `none`) that have staged runs -> the score of their first run. */
  group(names: string): string;
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
}

export const DEFAULT_PREFIX = 'fitq';
export const DEFAULT_QUEUE = 'default';
/** Name of the BullMQ queue of every namespace (the Lua scripts' jobs.lua agrees). */
export const RUN_QUEUE = 'runs';

export function namespaceKeys(queue: string = DEFAULT_QUEUE, prefix: string = DEFAULT_PREFIX): NamespaceKeys {
  validateQueueName(queue);
  validateKeyPrefix(prefix);
  const base = `${prefix}:{${queue}}:`;
  return {
    base,
    seq: `${base}seq`,
    ids: `${base}ids`,
    groups: `${base}groups`,
    batches: `${base}batches`,
    arrays: `${base}arrays`,
    arrayTally: `${base}arrays:tally`,
    workers: `${base}workers`,
    holds: `${base}holds`,
    poolCapacity: `${base}pool:capacity`,
    poolUsed: `${base}pool:used`,
    events: `${base}events`,
    settings: `${base}settings`,
    notifyOutbox: `${base}notify:outbox`,
    reconcile: `${base}reconcile`,
    stats: `${base}stats`,
    queue: {
      prefix: `${prefix}:{${queue}}`,
      name: RUN_QUEUE,
      key: (suffix) => `${base}${RUN_QUEUE}:${suffix}`,
      workerClientName: (worker) => `${prefix}:{${queue}}:${Buffer.from(RUN_QUEUE).toString('base64')}:w:${worker}`,
    },
    run: (runId) => `${base}${RUN_QUEUE}:${runId}`,
    runLog: (runId) => `${base}${RUN_QUEUE}:${runId}:output`,
    runPackedLog: (runId) => `${base}${RUN_QUEUE}:${runId}:output:packed`,
    runAttempts: (runId) => `${base}${RUN_QUEUE}:${runId}:attempts`,
    dependents: (runId) => `${base}dependents:${runId}`,
    arrayDependents: (arrayId) => `${base}dependents:array:${arrayId}`,
    dependentsPending: `${base}dependents-pending`,
    staged: (shape) => `${base}staged:${shape}`,
    group: (names) => `${base}group:${names}`,
    worker: (name) => {
      const info = `${base}worker:${name}`;
      return {
        info,
        capacity: `${info}:capacity`,
        free: `${info}:free`,
        runs: `${info}:runs`,
        devices: `${info}:devices`,
        reserved: `${info}:reserved`,
      };
    },
  };
}
