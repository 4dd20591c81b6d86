/**
 * Workers, on any machine: the live ones (`fitq workers`), read from their
 * hashes (model/worker-record.ts says what a record is);
 * asking them to stop (`fitq stop`), draining and undraining them (`fitq
 * drain`, `fitq undrain`: setDrained-*.lua), and waiting for them.
 */
import { TimeoutError, UsageError } from '../errors.js';
import { judgeLiveness, processGoneHere, serverTimeMs } from '../model/liveness.js';
import { validateWorkerName } from '../model/names.js';
import { dataFields, fitqRunData } from '../model/run-data.js';
import type { HeldRun, WorkerRecord } from '../model/worker-record.js';
import { decodeDeviceReading, type DeviceReading } from '../gpu/device-reading.js';
import { closeRedis } from '../redis/open-connections.js';
import { execPipeline } from '../redis/pipeline.js';
import { parseDecimal } from '../resources/amount.js';
import { parseStoredResources, resourcesFromHash } from '../resources/spec.js';
import { quote } from '../text/quote.js';
import type { QueueContext, ReadContext } from './context.js';
import { reap } from './upkeep.js';

/**
 * Live workers with capacity, usage, runs and liveness: one whose lease
 * ran out is left out, as reaping will remove it (its runs read as the
 * reaper will settle them: model/upkeep-view.ts). Reads only.
 */
export async function listWorkers(ctx: ReadContext): Promise<WorkerRecord[]> {
  return (await readWorkers(ctx)).filter((worker) => worker.liveness.leaseLeftMs >= 0);
}

/** Live workers, after reaping those whose lease ran out: for commands that act on workers. */
async function reapedWorkers(ctx: QueueContext): Promise<WorkerRecord[]> {
  await reap(ctx);
  return listWorkers(ctx);
}

/**
 * Asks live workers, on any machine, to stop: gracefully (their runs
 * finish) or `now` (their runs are terminated first). An unknown name is a
 * UsageError and nothing is asked of anyone. With `wait`, resolves once
 * they have all left.
 */
export async function stopWorkers(
  ctx: QueueContext,
  names: readonly string[],
  options: { now?: boolean; wait?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  names.forEach(validateWorkerName);
  const live = new Set((await reapedWorkers(ctx)).map((worker) => worker.name));
  const unknown = names.filter((name) => !live.has(name));
  if (unknown.length > 0) throw new UsageError(`unknown worker '${unknown[0]}' (no live worker has that name)`);
  for (const name of names) await ctx.scripts.requestStop(name, options.now ? 'now' : 'graceful');
  if (!options.wait) return;
  let left: WorkerRecord[] = [];
  const gone = await waitForWorkers(ctx, (workers) => {
    left = workers.filter((worker) => names.includes(worker.name));
    return left.length === 0;
  }, options.timeoutMs ?? 10 * 60_000);
  if (!gone) throw new TimeoutError(`worker '${left[0]?.name}' has not stopped yet`);
}

/**
 * Drains live workers, on any machine (they finish what they run, claim
 * nothing more, drop their hold on a blocked head and stay registered),
 * or undrains them. The names are checked against the live workers first,
 * so an unknown one is a UsageError and nothing changes; then each is
 * drained or undrained in one script call (setDrained-*.lua). Returns the
 * workers as they are now, and which of them changed.
 */
export async function setDrained(ctx: QueueContext, names: readonly string[], drained: boolean): Promise<{ worker: WorkerRecord; changed: boolean }[]> {
  names.forEach(validateWorkerName);
  const unique = [...new Set(names)];
  if (unique.length === 0) throw new UsageError(`name the workers to ${drained ? 'drain' : 'undrain'} (fitq workers lists them)`);
  const live = new Set((await reapedWorkers(ctx)).map((worker) => worker.name));
  const unknown = unique.find((name) => !live.has(name));
  if (unknown !== undefined) throw new UsageError(`unknown worker ${quote(unknown)} (no live worker has that name)`);
  const changed = new Map<string, boolean>();
  for (const name of unique) {
    const result = await ctx.scripts.setDrained(name, drained);
    if (result === undefined) throw new UsageError(`worker ${quote(name)} left meanwhile`);
    changed.set(name, result);
  }
  const workers = await readWorkers(ctx);
  return unique.flatMap((name) => {
    const worker = workers.find((candidate) => candidate.name === name);
    return worker ? [{ worker, changed: changed.get(name)! }] : [];
  });
}

/**
 * Waits until `done` holds for the live workers: checked at once, whenever
 * a worker joins or leaves (pub/sub), and every second besides (a dead
 * worker leaves when its lease runs out, which no event tells). Reads
 * only. Resolves false after
 * `timeoutMs`, or when `signal` aborts.
 */
export async function waitForWorkers(
  ctx: QueueContext,
  done: (workers: WorkerRecord[]) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const { redis: subscriber } = await ctx.connect();
  let changed = false;
  let wake = () => {};
  subscriber.on('message', (_channel: string, message: string) => {
    if (/"type":"worker(Joined|Lost)"/.test(message)) {
      changed = true;
      wake();
    }
  });
  signal?.addEventListener('abort', () => wake(), { once: true });
  try {
    await subscriber.subscribe(ctx.keys.events);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      changed = false;
      if (signal?.aborted) return false;
      if (done(await listWorkers(ctx))) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      if (changed) continue; // something happened while we looked
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(1000, remaining));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    await closeRedis(subscriber);
  }
}

/** Reads every registered worker (read only; pair with a reap for liveness). */
export async function readWorkers({ redis, keys }: ReadContext): Promise<WorkerRecord[]> {
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
    pipeline.hgetall(w.info).hgetall(w.capacity).hgetall(w.free).smembers(w.runs).hgetall(w.devices).hgetall(w.gpus);
  }
  pipeline.hgetall(keys.holds);
  const [timeReply, ...replies] = await execPipeline(pipeline);
  const serverNow = serverTimeMs((timeReply ?? ['0', '0']) as [string, string]);
  const holds = (replies[replies.length - 1] ?? {}) as Record<string, string>;
  const heldDemands = await readHeldDemands({ redis, keys }, Object.keys(holds));
  const workers: WorkerRecord[] = [];
  names.forEach(({ name, deadline }, index) => {
    const [info, capacity, free, runs, devices, gpus] = replies.slice(index * 6, index * 6 + 6) as [
      Record<string, string>,
      Record<string, string>,
      Record<string, string>,
      string[],
      Record<string, string>,
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
      ...(info.gpuProbe ? { gpuProbe: gpuProbeOf(gpus, Number(info.gpuProbe), serverNow) } : {}),
    });
  });
  return workers;
}

/** A worker's GPU probe reading as its gpus hash holds it (recordGpuProbe-*.lua). */
function gpuProbeOf(gpus: Record<string, string>, staleMs: number, serverNow: number): NonNullable<WorkerRecord['gpuProbe']> {
  const at = Number(gpus.at);
  const devices = new Map<number, DeviceReading>();
  for (const [field, text] of Object.entries(gpus)) {
    const reading = /^\d+$/.test(field) ? decodeDeviceReading(text) : undefined;
    if (reading) devices.set(Number(field), reading);
  }
  return Number.isFinite(at) && at > 0 ? { at, ageMs: Math.max(0, serverNow - at), staleMs, devices } : { staleMs, devices };
}

/** The runs some worker holds resources for, as HeldRun without the id. */
async function readHeldDemands({ redis, keys }: ReadContext, runIds: string[]): Promise<Map<string, Omit<HeldRun, 'runId'>>> {
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
