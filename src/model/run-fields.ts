/**
 * The one table of a run's stored fields: for each, where it lives, its
 * kind, and whether its signature covers it. Everything that moves a run
 * between its forms goes by it: the job data written at stage (run-codec.ts,
 * encodeRunData), the flat string fields read back from it (runDataFields),
 * the RunRecord decoded from those and the job hash (run-decode.ts), and the
 * payload a signature covers (security/signing.ts).
 *
 * A run is a BullMQ job. What it is (command, demands, ...) is the job's
 * `data`, JSON, written when it is staged or edited; what happens to it
 * (status, worker, claim epoch, ...) are fields of the job hash, beside
 * BullMQ's own, written by the scripts. In code a run is one flat record of
 * strings: the job hash with its data's fields spread over it, each as its
 * kind writes it as text; that is also the form a run is signed in.
 *
 * Imports nothing: signing (a lower layer) reads it too.
 */

/**
 * How a field is written. As text (the flat record, the job hash) and in the
 * job data (JSON):
 * - `text`: a string, the same in both;
 * - `number`: a decimal number; a JSON number in the data;
 * - `flag`: "1" (else "0" in the data's text, absent in the hash); true/false in the data;
 * - `json`: JSON text; the value itself in the data;
 * - `list`: comma-separated integers ("0,3", GPU devices), a string in the data too;
 * - `spread`: JSON text of an object whose keys sit at the top of the data
 *   (the lifecycle options, parked.ts).
 */
export type RunFieldKind = 'text' | 'number' | 'flag' | 'json' | 'list' | 'spread';

export interface RunFieldSpec {
  /** `data`: the job's data, what the run is; `hash`: a job hash field the scripts write. */
  readonly home: 'data' | 'hash';
  readonly kind: RunFieldKind;
  /**
   * What the field reads as when the data lacks it. Written only when it
   * differs (a default costs bytes in every job: see docs/benchmarks.md,
   * "Bytes per run"); fields without one only when given.
   */
  readonly always?: unknown;
  /** Written even when it is the default: a job whose data has it is a fitq run's (runDataFields). */
  readonly marksRun?: true;
  /**
   * Covered by the signature: `always` (null when absent, so absent and
   * empty differ), or `ifPresent` (name and value, only when present: runs
   * signed before the field existed keep their signature).
   */
  readonly signed?: 'always' | 'ifPresent';
}

/**
 * Every field fitq stores of a run. Data fields come first, in the order the
 * data is written and signed: never reorder signed ones, or signatures made
 * before no longer verify. Runs stored before defaults were left out hold
 * them all (`"shell":false,"cwd":"","env":{}`...): they read the same.
 */
export const RUN_FIELDS = {
  /** The argv to run; with `shell`, one string run by `sh -c`. */
  command: { home: 'data', kind: 'json', always: [], marksRun: true, signed: 'always' },
  shell: { home: 'data', kind: 'flag', always: false, signed: 'always' },
  cwd: { home: 'data', kind: 'text', always: '', signed: 'always' },
  env: { home: 'data', kind: 'json', always: {}, signed: 'always' },
  labels: { home: 'data', kind: 'json', always: {} },
  /** Exact demands, `name=amount` sorted by name ("cpu=1 mem=500000000"). */
  resources: { home: 'data', kind: 'text', always: '', signed: 'always' },
  /** The demands as typed ("mem=0.5G cpu=1"), if typed: for display, so not signed. */
  requires: { home: 'data', kind: 'text' },
  /** GPU devices it is pinned to ("0,1"), if any. */
  gpus: { home: 'data', kind: 'list', signed: 'always' },
  retries: { home: 'data', kind: 'number', signed: 'always' },
  priority: { home: 'data', kind: 'number', always: 0, signed: 'always' },
  /** Time limit in ms, if any. */
  timeLimit: { home: 'data', kind: 'number', signed: 'ifPresent' },
  /** `SIGUSR1@2m`, if given. */
  timeSignal: { home: 'data', kind: 'text', signed: 'ifPresent' },
  signature: { home: 'data', kind: 'text' },
  /** Its user's own signature (security/user-keys.ts), `ed25519:<base64url>`, if the stager has a key. */
  userSignature: { home: 'data', kind: 'text' },
  notify: { home: 'data', kind: 'text' },
  /** hold, begin, delay, after, keepIfDependencyFails, retry (parked.ts). */
  lifecycle: { home: 'data', kind: 'spread' },
  /** Its index in its array, and its parameters (the array's id is the hash's `array`). */
  arrayIndex: { home: 'data', kind: 'number' },
  params: { home: 'data', kind: 'json' },
  /** Files the worker also writes its output to. */
  output: { home: 'data', kind: 'json', signed: 'ifPresent' },
  /** Preemptible (`--preemptible`): its checkpoint signal and grace before it is stopped, `SIGUSR1@60s` (`SIGTERM`: stopped at once). */
  preempt: { home: 'data', kind: 'text', signed: 'ifPresent' },
  /** How long it runs before it may be preempted (ms, `--preempt-after`), if set. */
  preemptAfter: { home: 'data', kind: 'number', signed: 'ifPresent' },

  // What happens to it: the job hash, written by the scripts.
  status: { home: 'hash', kind: 'text' },
  held: { home: 'hash', kind: 'flag' },
  seq: { home: 'hash', kind: 'number' },
  /** When staged (BullMQ's), started and ended, epoch ms. */
  timestamp: { home: 'hash', kind: 'number' },
  processedOn: { home: 'hash', kind: 'number' },
  finishedOn: { home: 'hash', kind: 'number' },
  worker: { home: 'hash', kind: 'text' },
  exitCode: { home: 'hash', kind: 'number' },
  signal: { home: 'hash', kind: 'text' },
  reason: { home: 'hash', kind: 'text' },
  /** Its staged index (resources/shape.ts). */
  shape: { home: 'hash', kind: 'text' },
  /** The claim: its epoch, the worker share and the pool share it reserved ("a=1 b=2"), the devices it placed the run on with the share of each, the limit it applies and when that runs out. */
  epoch: { home: 'hash', kind: 'number' },
  reserved: { home: 'hash', kind: 'text' },
  pooled: { home: 'hash', kind: 'text' },
  /** What its claim counted against its user and its project (a line `<owner>|<demands>` each, lua/includes/quotas/chargeRun.lua), while it runs. */
  charged: { home: 'hash', kind: 'text' },
  devices: { home: 'hash', kind: 'list' },
  deviceShare: { home: 'hash', kind: 'text' },
  runLimit: { home: 'hash', kind: 'number' },
  deadline: { home: 'hash', kind: 'number' },
  restaged: { home: 'hash', kind: 'number' },
  restagedReason: { home: 'hash', kind: 'text' },
  beginAt: { home: 'hash', kind: 'number' },
  waitDeps: { home: 'hash', kind: 'flag' },
  depsNever: { home: 'hash', kind: 'text' },
  failures: { home: 'hash', kind: 'number' },
  restarted: { home: 'hash', kind: 'number' },
  canceledFor: { home: 'hash', kind: 'text' },
  /** Times it was preempted (lua/includes/preemption/), and while it is being preempted, for which run and since when (`<run id>|<ms>`). */
  preempted: { home: 'hash', kind: 'number' },
  preempting: { home: 'hash', kind: 'text' },
  /** A signed run's last change asked for and admitted, the release or restart that let it start, and a cancel a worker refused, with why (security/request-signature.ts). */
  lastRequest: { home: 'hash', kind: 'text' },
  startRequest: { home: 'hash', kind: 'text' },
  refusedRequest: { home: 'hash', kind: 'text' },
  refusedWhy: { home: 'hash', kind: 'text' },
  array: { home: 'hash', kind: 'text' },
  /** What it used, as its worker measured it (run-usage.ts): while it runs, and in all once it ended. */
  usage: { home: 'hash', kind: 'json' },
  /**
   * Who staged it (stager.ts): a user name and the host it was staged from,
   * written by the stage script beside the data, not in it (the data of a
   * short run stays within a listpack value), and signed when present.
   */
  user: { home: 'hash', kind: 'text', signed: 'ifPresent' },
  stagedFrom: { home: 'hash', kind: 'text', signed: 'ifPresent' },
} as const satisfies Readonly<Record<string, RunFieldSpec>>;

export type RunFieldName = keyof typeof RUN_FIELDS;

/** The fields of one home, in the table's order. */
export function fieldsOf(home: RunFieldSpec['home']): RunFieldName[] {
  return (Object.keys(RUN_FIELDS) as RunFieldName[]).filter((name) => RUN_FIELDS[name].home === home);
}

/** The fields a signature covers in one way, in the table's order. */
export function signedFields(how: NonNullable<RunFieldSpec['signed']>): RunFieldName[] {
  return (Object.keys(RUN_FIELDS) as RunFieldName[]).filter((name) => (RUN_FIELDS[name] as RunFieldSpec).signed === how);
}
