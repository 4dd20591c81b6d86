/**
 * Reads the registered workers as `fitq workers` shows them, from their
 * hashes (model/worker-record.ts says what a worker record is).
 */
import type { Redis } from 'ioredis';
import { parseDecimal } from '../resources/amount.js';
import { parseStoredResources, resourcesFromHash } from '../resources/spec.js';
import { judgeLiveness, processGoneHere, serverTimeMs } from '../model/liveness.js';
import { dataFields, fitqRunData } from '../model/run-data.js';
import type { HeldRun, WorkerRecord } from '../model/worker-record.js';
import type { NamespaceKeys } from '../queue/keys.js';
import { execPipeline } from '../redis/pipeline.js';

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
