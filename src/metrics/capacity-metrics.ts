/**
 * What a namespace's workers and pool have and have reserved, as Prometheus
 * gauges. GPU devices carry DCGM exporter's labels (`gpu`: the device
 * index, `Hostname`: the worker's host), so fitq's view of a device joins
 * with its measured use.
 */
import { Gauge, type Registry } from 'prom-client';
import type { MetricsSnapshot } from '../model/metrics-snapshot.js';
import { microsToNumber } from '../resources/amount.js';

/** Pool resources that are an array's limit (`array.<id>`): one per array, so left out (no run or array ids as labels). */
const ARRAY_LIMIT = /^array\./;
const MIB = 1_048_576;

export interface CapacityMetrics {
  add(queue: string, snapshot: MetricsSnapshot): void;
}

export function capacityMetrics(registry: Registry): CapacityMetrics {
  const registers = [registry];
  const gauge = (name: string, help: string, labelNames: string[]) => new Gauge({ name, help, labelNames, registers });
  const alive = gauge('fitq_worker_alive', 'Registered workers: 1 while the lease holds, 0 once it lapsed (until reaped).', ['queue', 'worker', 'Hostname']);
  const heartbeatAge = gauge('fitq_worker_heartbeat_age_seconds', 'Time since the worker last renewed its lease (Redis clock).', ['queue', 'worker']);
  const capacity = gauge('fitq_worker_capacity', 'A worker\'s capacity per resource, in base units.', ['queue', 'worker', 'resource']);
  const reserved = gauge('fitq_worker_reserved', 'What running runs reserve of a worker\'s capacity, per resource.', ['queue', 'worker', 'resource']);
  const running = gauge('fitq_worker_running_runs', 'Runs a worker runs now.', ['queue', 'worker']);
  const concurrency = gauge('fitq_worker_concurrency', 'Most runs a worker runs at once (0: no limit).', ['queue', 'worker']);
  const drained = gauge('fitq_worker_drained', '1 when the worker is drained (fitq drain): it claims nothing.', ['queue', 'worker']);
  const holding = gauge('fitq_worker_holding', '1 when the worker holds resources for a blocked head (the next run in order that does not fit yet).', ['queue', 'worker']);
  const gpuFree = gauge('fitq_gpu_free_share', 'Unreserved share of a GPU device (1: whole device free, 0: fully reserved); gpu and Hostname as DCGM exporter labels them.', ['queue', 'worker', 'Hostname', 'gpu']);
  // What the worker's GPU probe last read of each device (a worker that probes): labels as DCGM exporter's, so they join.
  const deviceLabels = ['queue', 'worker', 'Hostname', 'gpu', 'UUID'];
  const gpuState = gauge('fitq_gpu_state', 'A probed GPU device\'s state: 1 for the state it is in (ok; busy: a process fitq did not start holds it; lost: nvidia-smi cannot reach it).', [...deviceLabels, 'state']);
  const gpuMemoryTotal = gauge('fitq_gpu_memory_total_bytes', 'A probed GPU device\'s memory, as nvidia-smi reports it.', deviceLabels);
  const gpuMemoryUsed = gauge('fitq_gpu_memory_used_bytes', 'Memory in use on a probed GPU device, by every process and the driver.', deviceLabels);
  const gpuMemoryForeign = gauge('fitq_gpu_memory_foreign_bytes', 'Memory that processes fitq did not start use on a probed GPU device.', deviceLabels);
  const gpuUtilization = gauge('fitq_gpu_utilization_ratio', 'A probed GPU device\'s utilisation, 0 to 1.', deviceLabels);
  const poolCapacity = gauge('fitq_pool_capacity', 'A cluster-wide pool resource\'s capacity.', ['queue', 'resource']);
  const poolReserved = gauge('fitq_pool_reserved', 'What running runs reserve of a pool resource.', ['queue', 'resource']);
  return {
    add(queue, snapshot) {
      for (const worker of snapshot.workers) {
        const labels = { queue, worker: worker.name };
        alive.set({ ...labels, Hostname: worker.host }, worker.alive ? 1 : 0);
        heartbeatAge.set(labels, Math.max(0, snapshot.now - worker.heartbeatAt) / 1000);
        running.set(labels, worker.running);
        concurrency.set(labels, worker.concurrency);
        drained.set(labels, worker.drained ? 1 : 0);
        holding.set(labels, worker.holding ? 1 : 0);
        for (const [resource, total] of worker.capacity) {
          capacity.set({ ...labels, resource }, microsToNumber(total));
          // Exact in micros first: 0.3 - 0.1 is not 0.2 in floating point.
          reserved.set({ ...labels, resource }, microsToNumber(total - (worker.free.get(resource) ?? total)));
        }
        for (const [gpu, free] of worker.devices) gpuFree.set({ ...labels, Hostname: worker.host, gpu }, microsToNumber(free));
        for (const [gpu, reading] of worker.gpus) {
          const device = { ...labels, Hostname: worker.host, gpu, UUID: reading.uuid ?? '' };
          for (const state of ['ok', 'busy', 'lost'] as const) gpuState.set({ ...device, state }, reading.state === state ? 1 : 0);
          const bytes = (mib: number | undefined, series: Gauge) => {
            if (mib !== undefined) series.set(device, mib * MIB);
          };
          bytes(reading.totalMiB, gpuMemoryTotal);
          bytes(reading.usedMiB, gpuMemoryUsed);
          bytes(reading.foreignMiB, gpuMemoryForeign);
          if (reading.utilization !== undefined) gpuUtilization.set(device, reading.utilization / 100);
        }
      }
      for (const [resource, total] of snapshot.pool.capacity) {
        if (ARRAY_LIMIT.test(resource)) continue;
        poolCapacity.set({ queue, resource }, microsToNumber(total));
        poolReserved.set({ queue, resource }, microsToNumber(snapshot.pool.used.get(resource) ?? 0n));
      }
    },
  };
}
