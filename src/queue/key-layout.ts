/**
 * Every Redis key fitq uses, described in one place (KEY_LAYOUT): the
 * TypeScript keys (namespaceKeys, keys.ts) and the Lua scripts' keys (each
 * `KEY.<name>(…)` of a script's source, built by luaKeyExpression) are
 * both built from it, so a key's name lives here only. All keys of a
 * namespace share the hash tag `{queue}`, so each Lua script touches a single
 * cluster slot. docs/redis-keys.md describes each of them.
 */
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
  /** Set: the registered users whose signed requests may change any user's signed runs (`fitq keys add --admin`, security/request-signature.ts). */
  admins: 'admins',
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
