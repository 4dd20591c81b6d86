/**
 * Live workers as `fitq workers` shows them: the record read from their
 * hashes (operations/workers.ts), their state, use, and JSON.
 */
import { formatHumanResources, resourcesToJson, type Resources } from '../resources/spec.js';
import { formatMicros } from '../resources/amount.js';
import type { Liveness } from './liveness.js';
import type { DeviceReading } from '../gpu/device-reading.js';

export interface WorkerRecord {
  name: string;
  host: string;
  pid: number;
  startedAt: number;
  heartbeatAt: number;
  /** Epoch ms after which the worker counts as dead unless it renews its lease. */
  leaseDeadline: number;
  leaseMs: number;
  /** Heartbeat age and lease left when read, by the Redis server's clock. */
  liveness: Liveness;
  concurrency: number;
  capacity: Resources;
  free: Resources;
  runs: string[];
  /** GPU device index -> free share (micros; 1,000,000 = whole device), if the worker has devices. */
  devices: Map<number, bigint>;
  /**
   * Its GPU probe's last reading (worker:<name>:gpus), if it probes: when
   * (server ms), how old it was when read, how old it may be for claims to
   * use it (ms), and each device's state and memory.
   */
  gpuProbe?: { at?: number; ageMs?: number; staleMs: number; devices: Map<number, DeviceReading> };
  /** The blocked head this worker holds resources for. */
  holding?: HeldRun;
  /** "backfill" or "fifo". */
  policy: string;
  /** How it places fractional gpu demands on its devices (the claim script's GpuPlacement, queue/scripts.ts). */
  gpuPlacement: 'pack' | 'spread';
  /** Under fifo: the blocked head every later run waits behind. */
  blockedBy?: string;
  /** Its --default-time-limit and --max-time-limit, ms, if set. */
  defaultTimeLimit?: number;
  maxTimeLimit?: number;
  /** When it was drained (fitq drain), epoch ms: it claims nothing more. */
  drainedAt?: number;
}

/** `active`; `draining`: drained, its runs still running; `drained`: drained and idle. */
export type WorkerState = 'active' | 'draining' | 'drained';

export function workerState(worker: WorkerRecord): WorkerState {
  if (worker.drainedAt === undefined) return 'active';
  return worker.runs.length > 0 ? 'draining' : 'drained';
}

/** A blocked head: its demands, the GPU devices it is pinned to, and its place in the order. */
export interface HeldRun {
  runId: string;
  demands: Resources;
  gpus: number[];
  priority: number;
  seq: number;
}

/** Used amounts: capacity minus free, zero amounts left out. */
export function usedResources(worker: WorkerRecord): Resources {
  const used = new Map<string, bigint>();
  for (const [name, total] of worker.capacity) {
    const amount = total - (worker.free.get(name) ?? 0n);
    if (amount !== 0n) used.set(name, amount);
  }
  return used;
}

/** JSON shape of a worker, for `fitq workers --json` and the API. */
export function workerToJson(worker: WorkerRecord): Record<string, unknown> {
  return {
    name: worker.name,
    host: worker.host,
    pid: worker.pid,
    startedAt: worker.startedAt,
    heartbeatAt: worker.heartbeatAt,
    leaseDeadline: worker.leaseDeadline,
    responding: worker.liveness.responding,
    heartbeatAgeMs: worker.liveness.heartbeatAgeMs,
    concurrency: worker.concurrency,
    capacity: resourcesToJson(worker.capacity),
    used: resourcesToJson(usedResources(worker)),
    free: resourcesToJson(worker.free),
    runs: worker.runs,
    devices: Object.fromEntries([...worker.devices].map(([index, free]) => [index, { free: Number(formatMicros(free)), ...probedToJson(worker, index) }])),
    ...(worker.gpuProbe ? { gpuProbe: { at: worker.gpuProbe.at ?? null, staleMs: worker.gpuProbe.staleMs, stale: probeStale(worker) } } : {}),
    holding: worker.holding?.runId,
    policy: worker.policy,
    gpuPlacement: worker.gpuPlacement,
    state: workerState(worker),
    drained: worker.drainedAt !== undefined,
    ...(worker.drainedAt === undefined ? {} : { drainedAt: worker.drainedAt }),
    ...(worker.defaultTimeLimit !== undefined ? { defaultTimeLimit: worker.defaultTimeLimit } : {}),
    ...(worker.maxTimeLimit !== undefined ? { maxTimeLimit: worker.maxTimeLimit } : {}),
  };
}

/** Capacity in human units: "gpu=4 mem=64G". */
export function describeCapacity(worker: WorkerRecord): string {
  return formatHumanResources(worker.capacity) || '(none)';
}

/** A device's probed state and memory for JSON (none for a worker that does not probe). */
function probedToJson(worker: WorkerRecord, index: number): Record<string, unknown> {
  if (!worker.gpuProbe) return {};
  const reading = worker.gpuProbe.devices.get(index);
  if (!reading) return { state: 'unknown' };
  return {
    state: probeStale(worker) ? 'stale' : reading.state,
    ...(reading.uuid === undefined ? {} : { uuid: reading.uuid }),
    ...(reading.why === undefined ? {} : { why: reading.why }),
    ...(reading.totalMiB === undefined ? {} : { memoryTotalMiB: reading.totalMiB }),
    ...(reading.usedMiB === undefined ? {} : { memoryUsedMiB: reading.usedMiB }),
    ...(reading.foreignMiB === undefined ? {} : { memoryForeignMiB: reading.foreignMiB }),
    ...(reading.utilization === undefined ? {} : { utilization: reading.utilization }),
  };
}

/** Whether the worker's GPU reading is too old (or missing) for its devices to take runs. */
export function probeStale(worker: WorkerRecord): boolean {
  const probe = worker.gpuProbe;
  return probe !== undefined && (probe.ageMs === undefined || probe.ageMs > probe.staleMs);
}

/**
 * "0:free 1:0.5 used 2:busy" for a worker's GPU devices (busy: fitq's runs
 * fill it), or "-"; a device its probe finds held by a process fitq did not
 * start reads `foreign`, one nvidia-smi cannot reach `lost`, and every
 * device `stale` while the reading is too old.
 */
export function describeDevices(worker: WorkerRecord): string {
  if (worker.devices.size === 0) return '-';
  return [...worker.devices.keys()].map((index) => `${index}:${deviceState(worker, index)}`).join(' ');
}

/** One device of describeDevices: `free`, `busy`, `0.5 used`, `foreign`, `lost` or `stale`. */
export function deviceState(worker: WorkerRecord, index: number): string {
  if (probeStale(worker)) return 'stale';
  const state = worker.gpuProbe?.devices.get(index)?.state;
  if (state === 'busy') return 'foreign';
  if (state === 'lost') return 'lost';
  const free = worker.devices.get(index) ?? 0n;
  return free === 1_000_000n ? 'free' : free === 0n ? 'busy' : `${formatMicros(1_000_000n - free)} used`;
}

/** Why a worker's devices take no run, one line each: `GPU 1 on w1: used by a process fitq did not start (…)`. */
export function deviceNotes(worker: WorkerRecord): string[] {
  const probe = worker.gpuProbe;
  if (!probe) return [];
  if (probeStale(worker)) {
    const age = probe.ageMs === undefined ? 'no GPU reading yet' : `its GPU reading is ${Math.round(probe.ageMs / 1000)} s old`;
    return [`GPUs on ${worker.name}: ${age}; they take no run until a fresh one lands`];
  }
  return [...probe.devices]
    .filter(([index, reading]) => worker.devices.has(index) && reading.state !== 'ok')
    .map(([index, reading]) => `GPU ${index} on ${worker.name}: ${reading.state === 'lost' ? 'lost, ' : ''}${reading.why ?? reading.state}`);
}
