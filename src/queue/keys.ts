/**
 * Every Redis key fitq uses, described in one place (KEY_LAYOUT): the
 * TypeScript keys (namespaceKeys) and the Lua scripts' keys (each
 * `KEY.<name>(…)` of a script's source, built by luaKeyExpression) are
 * both built from it, so a key's name lives here only. All keys of a
 * namespace share the hash tag `{queue}`, so each Lua script touches a single
 * cluster slot. docs/redis-keys.md describes each of them.
 */
import { validateKeyPrefix, validateQueueName } from '../model/names.js';

export const DEFAULT_PREFIX = 'fitq';
export const DEFAULT_QUEUE = 'default';
/** Name of the BullMQ queue of every namespace (KEY_LAYOUT's `run` and `queue…` keys lie under it). */
export const RUN_QUEUE = 'runs';

/**
 * Every key of a namespace: its name, and what follows the namespace's base
 * (`fitq:{QUEUE}:`), where `<part>` is a name given when the key is built
 * (a run id, a worker's name, a shape). A Lua script is passed in KEYS, by
 * these names (`local poolUsedKey = KEYS[3]`), the keys it can know before
 * it runs; it builds the others with the same names (`KEY.staged(base, shape)`).
 */
export const KEY_LAYOUT = {
  // The namespace's own keys.
  seq: 'seq',
  ids: 'ids',
  groups: 'groups',
  batches: 'batches',
  arrays: 'arrays',
  arrayTally: 'arrays:tally',
  workers: 'workers',
  holds: 'holds',
  poolCapacity: 'pool:capacity',
  poolUsed: 'pool:used',
  settings: 'settings',
  notifyOutbox: 'notify:outbox',
  reconcile: 'reconcile',
  stats: 'stats',
  dependentsPending: 'dependents-pending',
  /** Set: the users that have a quota (and `.default`, when a default quota is set): what `fitq quota ls` lists. */
  quotas: 'quotas',
  /** Hash: user -> their registered public key (`ed25519:…`, security/user-keys.ts): what proves a run is theirs. */
  userKeys: 'user-keys',
  /** Hash: fair share's settings (`off`, `halfLife`, `w:<resource>`, `share:<user>`, `epoch`; lua/includes/fairshare/fairSettings.lua). */
  fairShare: 'fair-share',
  /** Hash: user -> their decayed usage, scaled to the epoch (lua/includes/fairshare/readFairUsage.lua). */
  fairUsage: 'fair-usage',
  /** The namespace's pub/sub channel: a channel, not a key (never passed in KEYS). */
  events: 'events',
  /** Where fitq kept staged runs before runs were BullMQ jobs: only its existence is read (an older layout). */
  olderRuns: 'runs',
  // Keys of the fit index, of dependencies and of workers, by the data they are about.
  staged: 'staged:<shape>',
  /** The order index: the runs staged in one block of ORDER_BLOCK staging numbers, score = seq (lua/includes/lifecycle/orderRun.lua). */
  order: 'order:<block>',
  group: 'group:<names>',
  /** Hash: user -> how many shapes of theirs a group has (lua/includes/shape/indexShape.lua): whether fair share has users' shapes to order in it. */
  groupUsers: 'group-users:<names>',
  /** What changed in a group, for the fit indexes of worker classes: shape -> the group's version when it last changed (lua/includes/shape/indexShape.lua). */
  groupLog: 'group-log:<names>',
  /** A worker class (workers of equal capacity, devices and time limit): group -> the group version its fit index has caught up with. */
  fitClass: 'fit-class:<classId>',
  /** Set: the worker classes that keep a fit index of a group, whose indexes go with the group (lua/includes/classes/forgetFitIndexes.lua). */
  groupClasses: 'group-classes:<names>',
  /** A worker class's fit index of a group (part: `<classId>|<names>`): the group's shapes that fit the class's total capacity, scored as in `group:<names>`. */
  fitGroup: 'fit:<classGroup>',
  /** The runs that wait for a run, or (cause `array:<id>`) for every run of an array. */
  dependents: 'dependents:<cause>',
  arrayDependents: 'dependents:array:<arrayId>',
  /** Set: `<class>|<shape>` of the shapes of an array at its limit that claims took out of a worker class's fit index (lua/includes/arrays/unparkArray.lua). */
  arrayParked: 'array-parked:<arrayId>',
  /** A user's quota (lua/includes/quotas/): `running`, `staged` (counts) and `res:<resource>` (amounts); user `.default`: everyone's without one. */
  quota: 'quota:<user>',
  /** What a user's runs hold now: `runs` running, `open` not ended, `res:<resource>` reserved by the running ones. */
  userUsage: 'usage:<user>',
  worker: 'worker:<name>',
  workerCapacity: 'worker:<name>:capacity',
  workerFree: 'worker:<name>:free',
  workerRuns: 'worker:<name>:runs',
  workerDevices: 'worker:<name>:devices',
  workerReserved: 'worker:<name>:reserved',
  /** Its GPU probe's last reading: `at` (server ms) and per device index its state (src/gpu/device-reading.ts). */
  workerGpus: 'worker:<name>:gpus',
  // A run: its BullMQ job, and fitq's keys beside it.
  run: `${RUN_QUEUE}:<runId>`,
  runLog: `${RUN_QUEUE}:<runId>:output`,
  runPackedLog: `${RUN_QUEUE}:<runId>:output:packed`,
  runAttempts: `${RUN_QUEUE}:<runId>:attempts`,
  // BullMQ's own keys of the queue and of a job (only lua/includes/bullmq/ touches them).
  runLock: `${RUN_QUEUE}:<runId>:lock`,
  runLogs: `${RUN_QUEUE}:<runId>:logs`,
  queueWait: `${RUN_QUEUE}:wait`,
  queueActive: `${RUN_QUEUE}:active`,
  queuePrioritized: `${RUN_QUEUE}:prioritized`,
  queueDelayed: `${RUN_QUEUE}:delayed`,
  queueWaitingChildren: `${RUN_QUEUE}:waiting-children`,
  queueCompleted: `${RUN_QUEUE}:completed`,
  queueFailed: `${RUN_QUEUE}:failed`,
  queueEvents: `${RUN_QUEUE}:events`,
  queueMeta: `${RUN_QUEUE}:meta`,
  queueId: `${RUN_QUEUE}:id`,
  queuePc: `${RUN_QUEUE}:pc`,
  queueMarker: `${RUN_QUEUE}:marker`,
  queueMetrics: `${RUN_QUEUE}:metrics:<state>`,
  queueMetricsData: `${RUN_QUEUE}:metrics:<state>:data`,
} as const;

export type KeyName = keyof typeof KEY_LAYOUT;

/**
 * Staging numbers per key of the order index (`order:<block>`, block =
 * floor(seq / ORDER_BLOCK)): keys of a part, so the scripts that remove
 * runs build them (lua/includes/lifecycle/orderBlock.lua holds the same
 * number), and few of them (one per 100,000 runs ever staged).
 */
export const ORDER_BLOCK = 100_000;

/** The block of the order index a staging number lies in. */
export function orderBlock(seq: number): number {
  return Math.floor(seq / ORDER_BLOCK);
}

/** A key's pattern cut at its part: what comes before it, the part's name (none for a key fixed for the namespace), what comes after. */
interface KeyPattern {
  readonly head: string;
  readonly part: string | undefined;
  readonly tail: string;
}

const PATTERNS = new Map<string, KeyPattern>(
  Object.entries(KEY_LAYOUT).map(([name, pattern]) => {
    const match = /^([^<>]*)(?:<(\w+)>([^<>]*))?$/.exec(pattern);
    if (!match) throw new Error(`key ${name}: a pattern holds at most one <part>, got '${pattern}'`);
    return [name, { head: match[1]!, part: match[2], tail: match[3] ?? '' }];
  }),
);

function patternOf(name: string): KeyPattern {
  const pattern = PATTERNS.get(name);
  if (!pattern) throw new Error(`no key named '${name}' in KEY_LAYOUT`);
  return pattern;
}

/** Whether a key name is in KEY_LAYOUT. */
export function isKeyName(name: string): name is KeyName {
  return PATTERNS.has(name);
}

/** The name of the part a key is built from (`runId`, `name`, `shape`), or undefined for a key fixed for the namespace. */
export function keyPart(name: KeyName): string | undefined {
  return patternOf(name).part;
}

/** A key of the namespace whose base (`fitq:{QUEUE}:`) this is; `part` for a key built from data. */
export function namespaceKey(base: string, name: KeyName, part?: string): string {
  const { head, part: partName, tail } = patternOf(name);
  if (partName === undefined) return base + head;
  if (part === undefined) throw new Error(`key ${name} is built from a ${partName}: none given`);
  return base + head + part + tail;
}

/**
 * The Lua expression building key `name` (`KEY.<name>(base, part)` in a
 * script's source, replaced by lua-source.ts before Redis sees it): `(base
 * .. "runs:" .. runId)`. Built inline, not by a table of functions, so a
 * script pays nothing per call for the keys it could build. The only place
 * a Lua script's keys are spelled.
 */
export function luaKeyExpression(name: string, args: readonly string[]): string {
  const { head, part, tail } = patternOf(name);
  const wanted = part === undefined ? 1 : 2;
  if (args.length !== wanted) throw new Error(`KEY.${name} takes ${part === undefined ? '(base)' : `(base, ${part})`}, got ${args.length} argument(s)`);
  const pieces = [args[0]!, JSON.stringify(head), ...(part === undefined ? [] : [args[1]!]), ...(tail ? [JSON.stringify(tail)] : [])];
  return `(${pieces.join(' .. ')})`;
}

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
