/**
 * Why a run waits, checked against what the claim script then does: for
 * generated states of one worker (runs under way, a blocked head it holds,
 * a later run), and of two workers (one holding a blocked head, the other
 * with or without an older blocked run of its own), the reason says the
 * later run can start exactly when the next claims start it. And which
 * worker a "needs more" reason names.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/queue/client.js';
import { Scripts, type GpuPlacement } from '../../src/queue/scripts.js';
import { whyWaiting } from '../../src/queue/why-waiting.js';
import type { WorkerRecord } from '../../src/queue/worker-record.js';
import { parseResourceSpec } from '../../src/resources/spec.js';
import { fitq, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { prng } from '../support/prng.js';

const STATES = 300;
const TWO_WORKER_STATES_GENERATED = 300;
const SEED = 0x0ddba11;
const CAN_START = 'waiting for a worker to claim it';

interface RunSpec {
  resources: string;
  gpus?: string;
  priority?: number;
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
    const claim = () => scripts.claimRun('w', 't', Date.now(), 0, 'backfill', state.placement);
    const stage = async (spec: RunSpec) =>
      (await client.stage({ command: ['true'], resources: spec.resources, gpus: spec.gpus, priority: spec.priority })).runs[0]!.id;
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
    const result = await claim();
    return { reason, started: result.code === 'claimed' && result.runId === later };
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
    const claim = (name: 'a' | 'b') => scripts.claimRun(name, 't', Date.now(), 0, 'backfill', state.placement);
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
    let started = false;
    for (const name of ['a', 'b'] as const) {
      const result = await claim(name);
      if (result.code !== 'claimed') continue;
      if (result.runId !== later) return undefined; // another run came first
      started = true;
      break;
    }
    return { reason: names(reason), started, holds };
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

const memHog = { resources: 'mem=40' };
const onDevices = { devices: true, placement: 'pack' as const };

// Hand-picked states: [what, state, whether the later run starts, its reason].
const STATES_BY_HAND: [string, State, boolean, string][] = [
  [
    'a whole device the head needs',
    { ...onDevices, running: [{ resources: 'gpu=0.5 mem=40', gpus: '0' }, { resources: 'gpu=0.5', gpus: '1' }], head: { resources: 'gpu=2 mem=32' }, later: { resources: 'gpu=1' } },
    false,
    'it needs gpu=2 on the GPU devices this run would take',
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
    'it needs GPU device 2',
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
    "it needs license=1 of the pool's 1 free",
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
    "held for older run HEAD on a: it needs license=1 of the pool's 1 free",
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

  it(`for ${STATES} generated states of a worker holding a blocked head`, async () => {
    const outcomes = { started: 0, held: 0, heldForDevices: 0, other: 0 };
    for (const state of generateStates(STATES)) {
      const verdict = await judgeAndClaim(state);
      if (!verdict) continue;
      expect(verdict.reason === CAN_START, `${JSON.stringify(state)}: ${verdict.reason}`).toBe(verdict.started);
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

function worker(name: string, resources: string, devices: number[] = []): WorkerRecord {
  const capacity = parseResourceSpec(devices.length > 0 ? `${resources} gpu=${devices.length}` : resources);
  return {
    name, host: 'h', pid: 1, startedAt: 0, heartbeatAt: 0, leaseDeadline: 0, concurrency: 0, capacity, free: capacity, runs: [],
    devices: new Map(devices.map((id) => [id, 1_000_000n])), policy: 'backfill', gpuPlacement: 'pack',
    leaseMs: 30_000, liveness: { heartbeatAgeMs: 0, leaseLeftMs: 30_000, responding: true },
  };
}

describe('needs more than any live worker has', () => {
  it('names the worker that comes closest by amount, whichever is listed first', () => {
    const small = worker('small', 'gpu=2');
    const devices = worker('devices', '', [0, 1, 2, 3]);
    for (const workers of [[small, devices], [devices, small]]) {
      expect(whyWaiting({ demands: parseResourceSpec('gpu=8') }, workers).reason).toBe('needs more than any live worker has: gpu=8 > 4');
    }
    // Two shortfalls that are small beat one that is large.
    const lacksMuch = worker('a', 'gpu=1 mem=64');
    const lacksLittle = worker('b', 'gpu=7 mem=60');
    expect(whyWaiting({ demands: parseResourceSpec('gpu=8 mem=64') }, [lacksMuch, lacksLittle]).reason).toBe(
      'needs more than any live worker has: gpu=8 > 7, mem=64 > 60',
    );
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

describe('amounts in reasons', () => {
  it('are shown in human units, as users type them', () => {
    const box = worker('box', 'gpu=4 mem=64G');
    expect(whyWaiting({ demands: parseResourceSpec('mem=100G') }, [box]).reason).toBe('needs more than any live worker has: mem=100G > 64G');
    const busy = { ...box, free: parseResourceSpec('gpu=4 mem=2G') };
    expect(whyWaiting({ demands: parseResourceSpec('mem=8G') }, [busy]).reason).toBe('next in line on box: waiting for mem=8G > 2G free');
  });
});
