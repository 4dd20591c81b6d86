/**
 * Why a run waits, checked against what the claim script then does. The
 * reason comes from the explainRuns script, which judges a run for every
 * live worker with the claim's own policy (lua/includes/policy/); for
 * generated states of one worker (runs under way, a blocked head it holds, a
 * later run), of two workers (one holding a blocked head, the other with or
 * without an older blocked run of its own), and of one to three workers
 * with mixed policies (fifo and backfill), devices, pools and heads held on
 * one or two workers, the verdict says the later run starts on a worker
 * exactly when that worker's next claim starts it, and the reason says it
 * can start exactly when some worker then starts it. And which worker a
 * "needs more" reason names.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ClaimPolicy, GpuPlacement } from '../../src/queue/claim-reply.js';
import { shapeOf } from '../../src/model/stage.js';
import { CAN_START, whyWaiting } from '../../src/model/why-waiting.js';
import { formatResources, parseResourceSpec } from '../../src/resources/spec.js';
import { cliWhy, connectClient, fitq, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { prng } from '../support/prng.js';

const STATES = 300;
const TIME_LIMITED_STATES = 150;
const TWO_WORKER_STATES_GENERATED = 300;
const MIXED_STATES_GENERATED = 300;
const SEED = 0x0ddba11;

interface RunSpec {
  resources: string;
  gpus?: string;
  priority?: number;
  /** Time limit, ms. */
  timeLimit?: number;
}

interface State {
  /** Pool resources (`fitq pool set`), if any. */
  pool?: string;
  devices: boolean;
  placement: GpuPlacement;
  running: RunSpec[];
  head: RunSpec;
  later: RunSpec;
}

function generateStates(count: number): State[] {
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const run = (gpus: readonly number[], mems: readonly number[], devices: boolean): RunSpec => {
    const gpu = pick(gpus);
    const mem = pick(mems);
    const resources = [gpu > 0 ? `gpu=${gpu}` : '', mem > 0 ? `mem=${mem}` : ''].filter(Boolean).join(' ');
    // On a worker with devices, some runs are pinned: a whole N to N devices, a fraction to one.
    if (!devices || gpu === 0 || random() < 0.7) return { resources };
    const wanted = gpu < 1 ? 1 : gpu;
    const order = [0, 1, 2, 3].sort(() => random() - 0.5);
    return { resources, gpus: order.slice(0, wanted).sort().join(',') };
  };
  return Array.from({ length: count }, () => {
    const devices = random() < 0.75;
    const placement: GpuPlacement = random() < 0.5 ? 'pack' : 'spread';
    const running = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => run([0.25, 0.5, 0.75, 1, 2], [0, 8, 16, 32], devices));
    // Half the states: heads that lack memory but could have their devices, later runs after devices only.
    if (random() < 0.5) {
      const memHog = { resources: 'mem=40' };
      return { devices, placement, running: [memHog, ...running()], head: run([0.5, 1, 2], [32, 48], devices), later: run([0.25, 0.5, 0.75, 1, 2], [0, 4], devices) };
    }
    return { devices, placement, running: running(), head: run([0.5, 1, 2, 3, 4], [0, 16, 32, 48], devices), later: run([0, 0.25, 0.5, 1, 2], [0, 4, 16, 40], devices) };
  });
}

/** A registered worker and how it claims. */
interface Claimer {
  name: string;
  policy: ClaimPolicy;
  placement: GpuPlacement;
}

/**
 * Claims for each worker in turn until one starts the run. Before each
 * claim the run is explained afresh: the verdict says it starts on that
 * worker exactly when the claim starts it. Returns the worker that started
 * it; `other` when a claim started another run first (the state moved on).
 */
async function claimInTurn(scripts: Scripts, runId: string, claimers: readonly Claimer[], what: () => string): Promise<{ started?: string; other?: true }> {
  for (const { name, policy, placement } of claimers) {
    const [verdict] = await scripts.explainRuns([runId]);
    const says = verdict?.workers.find((worker) => worker.worker === name)?.starts !== undefined;
    const result = await scripts.claimRun(name, 't', 0, policy, placement);
    if (result.code === 'claimed' && result.runId !== runId) return { other: true };
    const started = result.code === 'claimed';
    expect(started, `${what()}: on ${name}, explained ${JSON.stringify(verdict, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`).toBe(says);
    if (started) return { started: name };
  }
  return {};
}

/** Sets the state up; returns the later run's reason and whether the next claim started it, or undefined when the head did not block. */
async function judgeAndClaim(state: State): Promise<{ reason: string; started: boolean } | undefined> {
  const client = await FitqClient.connect({ redisUrl: redisUrl(), queue: newQueue() });
  try {
    const scripts = new Scripts(client.redis, client.keys, 100);
    const registration = {
      name: 'w', token: 't', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, executorQueue: '',
      resources: 'gpu=4 mem=64', devices: state.devices ? [0, 1, 2, 3] : [], gpuPlacement: state.placement,
    };
    expect(await scripts.registerWorker(registration)).toBe(true);
    if (state.pool) await client.setPool(state.pool);
    const claim = () => scripts.claimRun('w', 't', 0, 'backfill', state.placement);
    const stage = async (spec: RunSpec) =>
      (await client.stage({ command: ['true'], resources: spec.resources, gpus: spec.gpus, priority: spec.priority, timeLimit: spec.timeLimit })).runs[0]!.id;
    for (const spec of state.running) {
      const id = await stage(spec);
      const result = await claim();
      if (result.code !== 'claimed') await client.cancelRun(id); // it does not fit beside the others
    }
    const head = await stage(state.head);
    const held = await claim();
    if (held.code !== 'waiting' || held.holding !== head) return undefined;
    const later = await stage(state.later);
    const { reason = '' } = await client.getRun(later);
    const claimers = [{ name: 'w', policy: 'backfill' as const, placement: state.placement }];
    const { started, other } = await claimInTurn(scripts, later, claimers, () => JSON.stringify(state));
    if (other) return undefined;
    return { reason, started: started !== undefined };
  } finally {
    await client.close();
  }
}

interface TwoWorkerState {
  pool?: string;
  devices: boolean;
  placement: GpuPlacement;
  /** Runs started on worker a (gpu=4 mem=64) and on worker b (the same, and x=1). */
  runningA: RunSpec[];
  runningB: RunSpec[];
  /** Blocked on a, which holds it. */
  head: RunSpec;
  /** Staged next, then b claims: b's first blocked run, if it is older than the head (priority) b holds it. */
  second?: RunSpec;
  /** Whether a claims again before the later run comes (dropping its hold if b holds an older run). */
  settle: boolean;
  later: RunSpec;
}

interface TwoWorkerVerdict {
  /** The later run's reason, with the head's id as HEAD and the second run's as SECOND. */
  reason: string;
  started: boolean;
  /** Who held what when the later run was judged: run (HEAD, SECOND) -> worker. */
  holds: Record<string, string>;
}

/**
 * Sets a two-worker state up; returns the later run's reason and whether
 * the next claims (a's, then b's) started it, or undefined when the state
 * did not come about (the head did not block on a, or something else
 * started).
 */
async function judgeAndClaimTwo(state: TwoWorkerState): Promise<TwoWorkerVerdict | undefined> {
  const client = await FitqClient.connect({ redisUrl: redisUrl(), queue: newQueue() });
  try {
    const scripts = new Scripts(client.redis, client.keys, 100);
    for (const [name, resources] of [['a', 'gpu=4 mem=64'], ['b', 'gpu=4 mem=64 x=1']] as const) {
      const registration = {
        name, token: 't', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, executorQueue: '',
        resources, devices: state.devices ? [0, 1, 2, 3] : [], gpuPlacement: state.placement,
      };
      expect(await scripts.registerWorker(registration)).toBe(true);
    }
    if (state.pool) await client.setPool(state.pool);
    const claim = (name: 'a' | 'b') => scripts.claimRun(name, 't', 0, 'backfill', state.placement);
    const stage = async (spec: RunSpec) =>
      (await client.stage({ command: ['true'], resources: spec.resources, gpus: spec.gpus, priority: spec.priority })).runs[0]!.id;
    for (const [name, specs] of [['a', state.runningA], ['b', state.runningB]] as const) {
      for (const spec of specs) {
        const id = await stage(spec);
        if ((await claim(name)).code !== 'claimed') await client.cancelRun(id); // it does not fit beside the others
      }
    }
    const head = await stage(state.head);
    const held = await claim('a');
    if (held.code !== 'waiting' || held.holding !== head) return undefined;
    const second = state.second ? await stage(state.second) : undefined;
    if ((await claim('b')).code === 'claimed') return undefined;
    if (state.settle && (await claim('a')).code === 'claimed') return undefined;
    const names = (text: string) => (second ? text.replaceAll(second, 'SECOND') : text).replaceAll(head, 'HEAD');
    const holds = Object.fromEntries(Object.entries(await client.redis.hgetall(client.keys.holds)).map(([run, worker]) => [names(run), worker]));
    const later = await stage(state.later);
    const { reason = '' } = await client.getRun(later);
    const claimers = (['a', 'b'] as const).map((name) => ({ name, policy: 'backfill' as const, placement: state.placement }));
    const { started, other } = await claimInTurn(scripts, later, claimers, () => JSON.stringify(state));
    if (other) return undefined; // another run came first
    return { reason: names(reason), started: started !== undefined, holds };
  } finally {
    await client.close();
  }
}

function generateTwoWorkerStates(count: number): TwoWorkerState[] {
  const random = prng(SEED + 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const run = (gpus: readonly number[], mems: readonly number[], devices: boolean, extra: string[] = []): RunSpec => {
    const gpu = pick(gpus);
    const mem = pick(mems);
    const resources = [gpu > 0 ? `gpu=${gpu}` : '', mem > 0 ? `mem=${mem}` : '', ...extra].filter(Boolean).join(' ') || 'mem=1';
    if (!devices || gpu === 0 || random() < 0.7) return { resources };
    const wanted = gpu < 1 ? 1 : gpu;
    const order = [0, 1, 2, 3].sort(() => random() - 0.5);
    return { resources, gpus: order.slice(0, wanted).sort().join(',') };
  };
  return Array.from({ length: count }, () => {
    const devices = random() < 0.5;
    const placement: GpuPlacement = random() < 0.5 ? 'pack' : 'spread';
    const pooled = random() < 0.25;
    const license = () => (pooled && random() < 0.5 ? ['license=1'] : []);
    const running = (extra: () => string[]) =>
      Array.from({ length: 1 + Math.floor(random() * 3) }, () => run([0.25, 0.5, 1, 2], [0, 8, 16, 32], devices, extra()));
    const priority = () => (random() < 0.5 ? { priority: 1 } : {});
    const second = random() < 0.8
      ? { ...run([0, 1, 2, 4], [0, 16, 48], devices, random() < 0.6 ? ['x=1'] : []), ...priority() }
      : undefined;
    const later = run([0, 0.25, 0.5, 1, 2], [0, 4, 16, 40], devices, [...(random() < 0.25 ? ['x=0.5'] : []), ...license()]);
    return {
      ...(pooled ? { pool: 'license=1' } : {}),
      devices,
      placement,
      runningA: running(() => []),
      runningB: running(() => (random() < 0.3 ? ['x=0.5'] : [])),
      head: run([0.5, 1, 2, 3, 4], [0, 16, 32, 48], devices, license()),
      ...(second ? { second } : {}),
      settle: random() < 0.3,
      later: random() < 0.15 ? { ...later, priority: 1 } : later,
    };
  });
}

/**
 * A reason that says a run is held for an older, blocked run names what
 * that run itself lacks (`mem=32, 24 free`, `waits for license=1 (0 free in
 * the pool)`, `not free yet`), never only what it holds of what is free.
 */
function expectHeadLackNamed(reason: string, state: unknown): void {
  if (!reason.startsWith('held for older run')) return;
  expect(reason, JSON.stringify(state)).toMatch(/, [\d.]+[KMGT]?i? free|waits for |not free yet/);
}

const memHog = { resources: 'mem=40' };
const onDevices = { devices: true, placement: 'pack' as const };

// Hand-picked states: [what, state, whether the later run starts, its reason].
const STATES_BY_HAND: [string, State, boolean, string][] = [
  [
    'a whole device the head needs',
    { ...onDevices, running: [{ resources: 'gpu=0.5 mem=40', gpus: '0' }, { resources: 'gpu=0.5', gpus: '1' }], head: { resources: 'gpu=2 mem=32' }, later: { resources: 'gpu=1' } },
    false,
    'it waits for mem=32 (24 free), and needs gpu=2 on the GPU devices this run would take',
  ],
  [
    'a share of a device the head does not need',
    { ...onDevices, running: [{ resources: 'gpu=0.5 mem=40', gpus: '0' }, { resources: 'gpu=0.5', gpus: '1' }], head: { resources: 'gpu=2 mem=32' }, later: { resources: 'gpu=0.5' } },
    true,
    CAN_START,
  ],
  [
    'the device the head would get, when another is left for it',
    { ...onDevices, running: [memHog], head: { resources: 'gpu=1 mem=48' }, later: { resources: 'gpu=1', gpus: '0' } },
    true,
    CAN_START,
  ],
  [
    'a device a pinned head keeps',
    { ...onDevices, running: [memHog], head: { resources: 'gpu=1 mem=48', gpus: '2' }, later: { resources: 'gpu=0.5', gpus: '2' } },
    false,
    'it waits for mem=48 (24 free), and needs GPU device 2',
  ],
  [
    'any device while the head cannot be placed',
    { ...onDevices, placement: 'spread', running: [{ resources: 'gpu=0.5' }, { resources: 'gpu=0.5' }, { resources: 'gpu=1' }, { resources: 'gpu=1' }], head: { resources: 'gpu=1' }, later: { resources: 'gpu=0.5' } },
    false,
    'it needs gpu=1 on GPU devices, not free yet',
  ],
  [
    'memory the head lacks',
    { devices: false, placement: 'pack', running: [memHog], head: { resources: 'gpu=1 mem=32' }, later: { resources: 'gpu=1 mem=4' } },
    false,
    'it needs mem=32, 24 free',
  ],
  [
    'memory the head lacks, with a higher priority than the head (so not held by it)',
    { devices: false, placement: 'pack', running: [memHog], head: { resources: 'gpu=1 mem=32' }, later: { resources: 'gpu=1 mem=4', priority: 1 } },
    true,
    CAN_START,
  ],
  [
    'the pool share the head waits for',
    { pool: 'license=1', devices: false, placement: 'pack', running: [{ resources: 'gpu=4' }], head: { resources: 'gpu=1 license=1' }, later: { resources: 'license=1' } },
    false,
    "it waits for gpu=1 (0 free), and needs license=1 of the pool's 1 free",
  ],
  [
    'gpu the head holds while it waits for a pool share (what it lacks is named)',
    { pool: 'license=1', devices: false, placement: 'pack', running: [{ resources: 'license=1' }], head: { resources: 'gpu=4 license=1' }, later: { resources: 'gpu=1' } },
    false,
    'it waits for license=1 (0 free in the pool), and needs gpu=4 of the 4 free',
  ],
  [
    'gpu the head holds while it waits for memory the later run does not need',
    { devices: false, placement: 'pack', running: [memHog], head: { resources: 'gpu=2 mem=32' }, later: { resources: 'gpu=3' } },
    false,
    'it waits for mem=32 (24 free), and needs gpu=2 of the 4 free',
  ],
  [
    'gpu the head does not lack, leaving it enough',
    { devices: false, placement: 'pack', running: [memHog], head: { resources: 'gpu=1 mem=32' }, later: { resources: 'gpu=3' } },
    true,
    CAN_START,
  ],
];

const busy = { runningA: [{ resources: 'gpu=2 mem=8' }], runningB: [{ resources: 'gpu=2 mem=8' }], devices: false, placement: 'pack' as const, settle: false };
const bigRun = { resources: 'gpu=4 mem=16' };

// Hand-picked two-worker states: [what, state, who holds what, whether the later run starts, its reason].
const TWO_WORKER_STATES: [string, TwoWorkerState, Record<string, string>, boolean, string][] = [
  [
    'a later small run, beside the next big run on b (b held it before; now only the oldest is held)',
    { ...busy, head: bigRun, second: bigRun, later: { resources: 'gpu=1 mem=4' } },
    { HEAD: 'a' },
    true,
    CAN_START,
  ],
  [
    "a later small run on a, when b holds an older run only b fits (a's hold no longer counts)",
    { ...busy, head: bigRun, second: { resources: 'gpu=4 x=1', priority: 1 }, later: { resources: 'gpu=1 mem=4' } },
    { HEAD: 'a', SECOND: 'b' },
    true,
    CAN_START,
  ],
  [
    'the same, once a has claimed again and dropped its hold',
    { ...busy, settle: true, head: bigRun, second: { resources: 'gpu=4 x=1', priority: 1 }, later: { resources: 'gpu=1 mem=4' } },
    { SECOND: 'b' },
    true,
    CAN_START,
  ],
  [
    'a later run only b fits, held for the older run b holds',
    { ...busy, head: bigRun, second: { resources: 'gpu=4 x=1', priority: 1 }, later: { resources: 'gpu=1 x=0.5' } },
    { HEAD: 'a', SECOND: 'b' },
    false,
    'held for older run SECOND on b: it needs gpu=4, 2 free, x=1 of the 1 free',
  ],
  [
    "the pool share of a's head, when b holds an older run (only the oldest hold counts)",
    { ...busy, pool: 'license=1', head: { resources: 'gpu=4 license=1' }, second: { resources: 'gpu=4 x=1', priority: 1 }, later: { resources: 'mem=4 license=1' } },
    { HEAD: 'a', SECOND: 'b' },
    true,
    CAN_START,
  ],
  [
    "the pool share of a's head, the oldest hold",
    { ...busy, pool: 'license=1', head: { resources: 'gpu=4 license=1' }, second: bigRun, later: { resources: 'mem=4 license=1' } },
    { HEAD: 'a' },
    false,
    "held for older run HEAD on a: it waits for gpu=4 (2 free), and needs license=1 of the pool's 1 free",
  ],
];

describe('why a run waits agrees with the claim', () => {
  it.each(STATES_BY_HAND)('beside a blocked head, a later run taking %s', async (_what, state, starts, reason) => {
    const verdict = await judgeAndClaim(state);
    expect(verdict).toBeDefined();
    expect(verdict!.started).toBe(starts);
    expect(verdict!.reason.replace(/^held for older run \w+ on w: /, '')).toBe(reason);
  });

  it.each(TWO_WORKER_STATES)('with two workers, %s', async (_what, state, holds, starts, reason) => {
    const verdict = await judgeAndClaimTwo(state);
    expect(verdict).toBeDefined();
    expect(verdict!.holds).toEqual(holds);
    expect(verdict!.reason).toBe(reason);
    expect(verdict!.started).toBe(starts);
  });

  it(`for ${TWO_WORKER_STATES_GENERATED} generated states of two workers, one holding a blocked head`, async () => {
    const outcomes = { started: 0, held: 0, other: 0, olderOnB: 0, startedBesideStaleHold: 0 };
    for (const state of generateTwoWorkerStates(TWO_WORKER_STATES_GENERATED)) {
      const verdict = await judgeAndClaimTwo(state);
      if (!verdict) continue;
      expect(verdict.reason === CAN_START, `${JSON.stringify(state)}: ${verdict.reason}`).toBe(verdict.started);
      expectHeadLackNamed(verdict.reason, state);
      if (verdict.started) outcomes.started++;
      else if (verdict.reason.startsWith('held for older run')) outcomes.held++;
      else outcomes.other++;
      if (verdict.holds.SECOND === 'b') outcomes.olderOnB++;
      if (verdict.started && verdict.holds.HEAD === 'a' && verdict.holds.SECOND === 'b') outcomes.startedBesideStaleHold++;
    }
    // The states really cover each outcome, and b holding a run older than a's.
    expect(outcomes.started).toBeGreaterThan(10);
    expect(outcomes.held).toBeGreaterThan(10);
    expect(outcomes.other).toBeGreaterThan(10);
    expect(outcomes.olderOnB).toBeGreaterThan(10);
    expect(outcomes.startedBesideStaleHold).toBeGreaterThan(3);
  });

  it(`for ${TIME_LIMITED_STATES} generated states of a worker holding a blocked head, with time limits`, async () => {
    // The same states, with whole-second limits on most runs: a later run
    // starts in what the head holds exactly when it ends before the head's
    // shadow time, and never while a running run has no limit.
    const random = prng(SEED ^ 0x7131);
    const limit = (chance: number, most: number) => (random() < chance ? (1 + Math.floor(random() * most)) * 1000 : undefined);
    const outcomes = { started: 0, backfilled: 0, held: 0, other: 0 };
    for (const state of generateStates(TIME_LIMITED_STATES)) {
      const limited: State = {
        ...state,
        running: state.running.map((run) => ({ ...run, timeLimit: limit(0.85, 100) })),
        head: { ...state.head, timeLimit: limit(0.5, 100) },
        later: { ...state.later, timeLimit: limit(0.85, 150) },
      };
      const verdict = await judgeAndClaim(limited);
      if (!verdict) continue;
      expect(verdict.reason.startsWith(CAN_START), `${JSON.stringify(limited)}: ${verdict.reason}`).toBe(verdict.started);
      if (verdict.reason.includes('(backfills: ends before')) outcomes.backfilled++;
      else if (verdict.started) outcomes.started++;
      else if (verdict.reason.startsWith('held for older run')) outcomes.held++;
      else outcomes.other++;
    }
    expect(outcomes.backfilled).toBeGreaterThan(5);
    expect(outcomes.started).toBeGreaterThan(5);
    expect(outcomes.held).toBeGreaterThan(5);
  });

  it(`for ${STATES} generated states of a worker holding a blocked head`, async () => {
    const outcomes = { started: 0, held: 0, heldForDevices: 0, other: 0 };
    for (const state of generateStates(STATES)) {
      const verdict = await judgeAndClaim(state);
      if (!verdict) continue;
      expect(verdict.reason === CAN_START, `${JSON.stringify(state)}: ${verdict.reason}`).toBe(verdict.started);
      expectHeadLackNamed(verdict.reason, state);
      if (verdict.started) outcomes.started++;
      else if (verdict.reason.includes('GPU device')) outcomes.heldForDevices++;
      else if (verdict.reason.startsWith('held for older run')) outcomes.held++;
      else outcomes.other++;
    }
    // The states really cover each outcome.
    expect(outcomes.started).toBeGreaterThan(10);
    expect(outcomes.held).toBeGreaterThan(10);
    expect(outcomes.heldForDevices).toBeGreaterThan(3);
    expect(outcomes.other).toBeGreaterThan(10);
  });
});

interface MixedWorker extends Claimer {
  resources: string;
  devices: boolean;
}

interface MixedState {
  pool?: string;
  workers: MixedWorker[];
  /** Runs started first, each on the worker at its index (canceled if it does not start there). */
  running: [number, RunSpec][];
  /** Staged one after the other, each followed by a claim of every worker in turn: blocked heads, held on one or two workers. */
  heads: RunSpec[];
  later: RunSpec;
}

function generateMixedStates(count: number): MixedState[] {
  const random = prng(SEED + 2);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const run = (gpus: readonly number[], mems: readonly number[], extra: string[] = []): RunSpec => {
    const gpu = pick(gpus);
    const mem = pick(mems);
    const resources = [gpu > 0 ? `gpu=${gpu}` : '', mem > 0 ? `mem=${mem}` : '', ...extra].filter(Boolean).join(' ') || 'mem=1';
    const priority = random() < 0.2 ? { priority: 1 } : {};
    if (gpu === 0 || random() < 0.75) return { resources, ...priority };
    const wanted = gpu < 1 ? 1 : gpu;
    const order = [0, 1, 2, 3].sort(() => random() - 0.5);
    return { resources, gpus: order.slice(0, wanted).sort().join(','), ...priority };
  };
  return Array.from({ length: count }, () => {
    const pooled = random() < 0.3;
    const workers = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i): MixedWorker => ({
      name: `w${i}`,
      // Only later workers may have x: a head only they fit can be held beside w0's.
      resources: i > 0 && random() < 0.5 ? 'gpu=4 mem=64 x=1' : 'gpu=4 mem=64',
      devices: random() < 0.5,
      placement: random() < 0.5 ? 'pack' : 'spread',
      policy: random() < 0.3 ? 'fifo' : 'backfill',
    }));
    const extra = () => [...(random() < 0.2 ? ['x=0.5'] : []), ...(pooled && random() < 0.4 ? ['license=1'] : [])];
    // Every worker busy with one to three runs.
    const running = workers.flatMap((_, index) =>
      Array.from({ length: 1 + Math.floor(random() * 3) }, (): [number, RunSpec] => [index, run([0.25, 0.5, 1, 2], [0, 8, 16, 32], extra())]),
    );
    // A second head is often older (priority) and fits only workers with x: it may be held beside the first.
    const heads = Array.from({ length: 1 + Math.floor(random() * 2) }, (_, i) =>
      i === 0 || random() < 0.3 ? run([2, 3, 4], [0, 16, 32, 48], extra()) : { ...run([3, 4], [0, 16, 48], ['x=1']), priority: 1 },
    );
    return { ...(pooled ? { pool: 'license=1' } : {}), workers, running, heads, later: run([0, 0.25, 0.5, 1, 2], [0, 4, 16, 40], extra()) };
  });
}

interface MixedVerdict {
  reason: string;
  started: boolean;
  /** How many workers held a blocked head when the later run was judged. */
  holders: number;
}

/** Sets a mixed state up; returns the later run's reason and whether some worker's claim then started it (undefined: another run started first). */
async function judgeAndClaimMixed(state: MixedState): Promise<MixedVerdict | undefined> {
  const client = await FitqClient.connect({ redisUrl: redisUrl(), queue: newQueue() });
  try {
    const scripts = new Scripts(client.redis, client.keys, 100);
    for (const worker of state.workers) {
      const registration = {
        name: worker.name, token: 't', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: worker.resources,
        devices: worker.devices ? [0, 1, 2, 3] : [], gpuPlacement: worker.placement, policy: worker.policy,
      };
      expect(await scripts.registerWorker(registration)).toBe(true);
    }
    if (state.pool) await client.setPool(state.pool);
    const claim = ({ name, policy, placement }: Claimer) => scripts.claimRun(name, 't', 0, policy, placement);
    const stage = async (spec: RunSpec) =>
      (await client.stage({ command: ['true'], resources: spec.resources, gpus: spec.gpus, priority: spec.priority })).runs[0]!.id;
    for (const [index, spec] of state.running) {
      const id = await stage(spec);
      const result = await claim(state.workers[index]!);
      if (result.code !== 'claimed' || result.runId !== id) await client.cancelRun(id).catch(() => {}); // it does not fit beside the others
    }
    for (const spec of state.heads) {
      await stage(spec);
      for (const worker of state.workers) await claim(worker);
    }
    const holders = new Set(Object.values(await client.redis.hgetall(client.keys.holds))).size;
    const later = await stage(state.later);
    const { reason = '' } = await client.getRun(later);
    const { started, other } = await claimInTurn(scripts, later, state.workers, () => JSON.stringify(state));
    if (other) return undefined;
    return { reason, started: started !== undefined, holders };
  } finally {
    await client.close();
  }
}

describe('why a run waits agrees with the claim, worker by worker', () => {
  it(`for ${MIXED_STATES_GENERATED} generated states of one to three workers: fifo and backfill, devices or not, pools, heads held on one or two workers`, async () => {
    const outcomes = { started: 0, held: 0, fifo: 0, other: 0, twoHolders: 0, notNow: 0 };
    for (const state of generateMixedStates(MIXED_STATES_GENERATED)) {
      const verdict = await judgeAndClaimMixed(state);
      if (!verdict) {
        outcomes.notNow++;
        continue;
      }
      expect(verdict.reason === CAN_START, `${JSON.stringify(state)}: ${verdict.reason}`).toBe(verdict.started);
      if (verdict.started) outcomes.started++;
      else if (verdict.reason.startsWith('held for older run')) outcomes.held++;
      else if (verdict.reason.startsWith('behind older run')) outcomes.fifo++;
      else outcomes.other++;
      if (verdict.holders >= 2) outcomes.twoHolders++;
    }
    // The states really cover each outcome, and heads held on two workers.
    expect(outcomes.started).toBeGreaterThan(10);
    expect(outcomes.held).toBeGreaterThan(10);
    expect(outcomes.fifo).toBeGreaterThan(3);
    expect(outcomes.other).toBeGreaterThan(10);
    expect(outcomes.twoHolders).toBeGreaterThan(3);
  });
});

interface TestWorker {
  name: string;
  resources: string;
  devices?: number[];
  /** A run started on it first, "mem=62G": what it leaves free. */
  running?: string;
}

/** Why a run of this demand, staged now, would wait beside these workers (registered in this order). */
async function reasonBeside(workers: readonly TestWorker[], demand: string): Promise<string> {
  const client = await connectClient(newQueue());
  const scripts = new Scripts(client.redis, client.keys, 100);
  for (const [i, { name, resources, devices = [], running }] of workers.entries()) {
    // Listed in lease-deadline order: each registered later lives longer.
    const registration = {
      name, token: 't', leaseMs: 60_000 + i * 1000, concurrency: 0, host: 'h', pid: 1, resources: formatResources(parseResourceSpec(resources)), devices,
    };
    expect(await scripts.registerWorker(registration)).toBe(true);
    if (running) {
      await client.stage({ command: ['true'], resources: running });
      expect((await scripts.claimRun(name, 't', 0)).code).toBe('claimed');
    }
  }
  const [verdict] = await scripts.explainRuns([], [shapeOf(parseResourceSpec(demand))]);
  return whyWaiting(verdict!).reason;
}

describe('needs more than any live worker has', () => {
  it('names the worker that comes closest by amount, whichever is listed first', async () => {
    const small = { name: 'small', resources: 'gpu=2' };
    const devices = { name: 'devices', resources: 'gpu=4', devices: [0, 1, 2, 3] };
    for (const workers of [[small, devices], [devices, small]]) {
      expect(await reasonBeside(workers, 'gpu=8')).toBe('needs more than any live worker has: gpu=8 > 4');
    }
    // Two shortfalls that are small beat one that is large.
    const lacksMuch = { name: 'a', resources: 'gpu=1 mem=64' };
    const lacksLittle = { name: 'b', resources: 'gpu=7 mem=60' };
    expect(await reasonBeside([lacksMuch, lacksLittle], 'gpu=8 mem=64')).toBe('needs more than any live worker has: gpu=8 > 7, mem=64 > 60');
  });

  it('fitq stage warns with the closest worker: gpu=8 > 4 beside workers with gpu=2 and --gpus 0,1,2,3', async () => {
    const queue = newQueue();
    await startTestWorker(queue, { name: 'small', resources: 'gpu=2' });
    await startTestWorker(queue, { name: 'big', gpus: '0,1,2,3' });
    const result = await fitq(['stage', '-r', 'gpu=8', '--', 'true'], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr.trim()).toBe(
      `Warning: run ${result.stdout.trim()} staged, but no live worker can run it yet: needs more than any live worker has: gpu=8 > 4`,
    );
  });
});

describe('a paused queue', () => {
  it('still says why a run could never start there; one that could waits for the resume', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPaused(true);
    await startTestWorker(queue, { name: 'box', resources: 'gpu=4' });
    const [never, fits] = (await client.stage([{ command: ['true'], resources: 'gpu=8' }, { command: ['true'], resources: 'gpu=1' }])).runs;
    const why = await cliWhy(queue);
    expect(why.get(never!.id)).toBe('needs more than any live worker has: gpu=8 > 4; the queue is paused (fitq resume)');
    expect(why.get(fits!.id)).toBe('the queue is paused (fitq resume)');
  });
});

describe('amounts in reasons', () => {
  it('are shown in human units, as users type them', async () => {
    const box = { name: 'box', resources: 'gpu=4 mem=64G' };
    expect(await reasonBeside([box], 'mem=100G')).toBe('needs more than any live worker has: mem=100G > 64G');
    expect(await reasonBeside([{ ...box, running: 'mem=62G' }], 'mem=8G')).toBe('next in line on box: waiting for mem=8G > 2G free');
  });
});
