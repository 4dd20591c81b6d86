/**
 * What each running run uses so far beside what its claim booked, as
 * Prometheus gauges (labelled with the run: only running runs are shown, so
 * the series are as many as runs running at once, and end with their run).
 * What ended runs used is kept with each run (`fitq runs show`). `user`:
 * who staged the run, to sum what each user's runs use and book.
 */
import { Gauge, type Registry } from 'prom-client';
import type { MetricsSnapshot } from '../model/metrics-snapshot.js';
import { microsToNumber, MICROS_PER_UNIT } from '../resources/amount.js';

export interface RunUsageMetrics {
  add(queue: string, snapshot: MetricsSnapshot): void;
}

export function runUsageMetrics(registry: Registry): RunUsageMetrics {
  const registers = [registry];
  const labelNames = ['queue', 'worker', 'run', 'user'];
  const gauge = (name: string, help: string, extra: string[] = []) => new Gauge({ name, help, labelNames: [...labelNames, ...extra], registers });
  const cpuSeconds = gauge('fitq_run_cpu_seconds', 'CPU time (user and system) a running run has used so far, all its processes together.');
  const cpuBooked = gauge('fitq_run_cpu_booked', 'The cpu a running run\'s claim reserved (its cpu demand).');
  const memoryPeak = gauge('fitq_run_memory_peak_bytes', 'Peak resident memory of a running run so far, all its processes together.');
  const memoryBooked = gauge('fitq_run_memory_booked_bytes', 'The mem a running run\'s claim reserved (its mem demand).');
  const gpuMemoryPeak = gauge('fitq_run_gpu_memory_peak_bytes', 'Peak GPU memory a running run\'s processes held on a device so far, as the worker\'s probe read it.', ['gpu']);
  return {
    add(queue, snapshot) {
      for (const worker of snapshot.workers) {
        for (const run of worker.runs) {
          const labels = { queue, worker: worker.name, run: run.id, user: run.user };
          const cpu = run.reserved.get('cpu');
          const mem = run.reserved.get('mem');
          if (cpu !== undefined) cpuBooked.set(labels, microsToNumber(cpu));
          if (mem !== undefined) memoryBooked.set(labels, Number(mem / MICROS_PER_UNIT));
          const { usage } = run;
          // A run not read yet (sampled, before its first reading) has no figures rather than zeros.
          if (!usage || usage.samples === 0) continue;
          cpuSeconds.set(labels, (usage.cpuUserMs + usage.cpuSystemMs) / 1000);
          memoryPeak.set(labels, usage.peakMemoryBytes);
          for (const [gpu, bytes] of Object.entries(usage.gpuPeakBytes ?? {})) gpuMemoryPeak.set({ ...labels, gpu }, bytes);
        }
      }
    },
  };
}
