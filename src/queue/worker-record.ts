/**
 * Live workers as `fitq workers` shows them, read from their hashes.
 */
import { execPipeline } from './pipeline.js';
import type { Redis } from 'ioredis';
import { formatHumanResources, parseStoredResources, resourcesFromHash, resourcesToJson, type Resources } from '../resources/spec.js';
import { formatMicros, parseDecimal } from '../resources/amount.js';
import type { NamespaceKeys } from './keys.js';
import { dataFields, fitqRunData } from './run-record.js';
import { judgeLiveness, processGoneHere, serverTimeMs, type Liveness } from './liveness.js';
import type { GpuPlacement } from './scripts.js';

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
  /** The blocked head this worker holds resources for. */
  holding?: HeldRun;
  /** "backfill" or "fifo". */
  policy: string;
  /** How it places fractional gpu demands on its devices. */
  gpuPlacement: GpuPlacement;
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
    devices: Object.fromEntries([...worker.devices].map(([index, free]) => [index, { free: Number(formatMicros(free)) }])),
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

/** "0:free 1:0.5 used 2:busy" for a worker's GPU devices, or "-". */
export function describeDevices(worker: WorkerRecord): string {
  if (worker.devices.size === 0) return '-';
  return [...worker.devices]
    .map(([index, free]) => `${index}:${free === 1_000_000n ? 'free' : free === 0n ? 'busy' : `${formatMicros(1_000_000n - free)} used`}`)
    .join(' ');
}

/** Reads every registered worker (read only; pair with a reap for liveness). */
export async function readWorkers(redis: Redis, keys: NamespaceKeys): Promise<WorkerRecord[]> {
  const entries = await redis.zrange(keys.workers, 0, -1, 'WITHSCORES');
  const names: { name: string; deadline: number }[] = [];
  for (let i = 0; i + 1 < entries.length; i += 2) {
    names.push({ name: entries[i] as string, deadline: Number(entries[i + 1]) });
  }
  if (names.length === 0) return [];
  const pipeline = redis.pipeline();
  // Liveness is judged by the server's clock, as the lease is.
  pipeline.time();
  for (const { name } of names) {
    const w = keys.worker(name);
    pipeline.hgetall(w.info).hgetall(w.capacity).hgetall(w.free).smembers(w.runs).hgetall(w.devices);
  }
  pipeline.hgetall(keys.holds);
  const [timeReply, ...replies] = await execPipeline(pipeline);
  const serverNow = serverTimeMs((timeReply ?? ['0', '0']) as [string, string]);
  const holds = (replies[replies.length - 1] ?? {}) as Record<string, string>;
  const heldDemands = await readHeldDemands(redis, keys, Object.keys(holds));
  const workers: WorkerRecord[] = [];
  names.forEach(({ name, deadline }, index) => {
    const [info, capacity, free, runs, devices] = replies.slice(index * 5, index * 5 + 5) as [
      Record<string, string>,
      Record<string, string>,
      Record<string, string>,
      string[],
      Record<string, string>,
    ];
    if (!info.token) return; // deregistered between the two reads
    // The blocked head it holds, if the holds hash agrees.
    const held = info.holding;
    const heldDemandsOfRun = held !== undefined && holds[held] === name ? heldDemands.get(held) : undefined;
    const heartbeatAt = Number(info.heartbeatAt ?? 0);
    const leaseMs = Number(info.leaseMs ?? 0);
    const pid = Number(info.pid ?? 0);
    const gone = processGoneHere(info.host ?? '', pid) ? pid : undefined;
    workers.push({
      name,
      host: info.host ?? '',
      pid,
      startedAt: Number(info.startedAt ?? 0),
      heartbeatAt,
      leaseDeadline: deadline,
      leaseMs,
      liveness: judgeLiveness(heartbeatAt, deadline, leaseMs, serverNow, gone),
      concurrency: Number(info.concurrency ?? 0),
      capacity: resourcesFromHash(capacity),
      free: resourcesFromHash(free),
      runs: [...runs].sort(),
      policy: info.policy || 'backfill',
      gpuPlacement: info.gpuPlacement === 'spread' ? 'spread' : 'pack',
      ...(info.blockedBy ? { blockedBy: info.blockedBy } : {}),
      ...(info.drained ? { drainedAt: Number(info.drained) } : {}),
      ...(info.defaultTimeLimit ? { defaultTimeLimit: Number(info.defaultTimeLimit) } : {}),
      ...(info.maxTimeLimit ? { maxTimeLimit: Number(info.maxTimeLimit) } : {}),
      devices: new Map(
        Object.entries(devices)
          .map(([index, share]) => [Number(index), parseDecimal(share)] as [number, bigint])
          .sort(([a], [b]) => a - b),
      ),
      ...(held !== undefined && heldDemandsOfRun ? { holding: { runId: held, ...heldDemandsOfRun } } : {}),
    });
  });
  return workers;
}

/** The runs some worker holds resources for, as HeldRun without the id. */
async function readHeldDemands(redis: Redis, keys: NamespaceKeys, runIds: string[]): Promise<Map<string, Omit<HeldRun, 'runId'>>> {
  if (runIds.length === 0) return new Map();
  const pipeline = redis.pipeline();
  for (const runId of runIds) pipeline.hmget(keys.run(runId), 'runData', 'data', 'seq');
  // A hold on a key that holds no hash (written by hand) holds nothing.
  const replies = await execPipeline(pipeline, { wrongTypeAsNull: true });
  return new Map(
    runIds.map((runId, i) => {
      const [runData, data, seq] = (replies[i] ?? []) as (string | null)[];
      const { resources, gpus, priority } = dataFields(fitqRunData({ runData, data }));
      return [
        runId,
        {
          demands: parseStoredResources(resources ?? ''),
          gpus: gpus ? gpus.split(',').map(Number) : [],
          priority: Number(priority ?? 0),
          seq: Number(seq ?? 0),
        },
      ];
    }),
  );
}
