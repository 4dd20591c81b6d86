/**
 * fitq: a Redis-backed, resource-aware run queue.
 *
 * @example
 * ```ts
 * import { FitqClient, startWorker } from 'fitq';
 * const client = await FitqClient.connect({ redisUrl: 'redis://127.0.0.1:6379' });
 * const { runs } = await client.stage({ command: ['python', 'train.py'], resources: 'gpu=1 mem=8G' });
 * const worker = await startWorker({ resources: 'gpu=2 mem=64G', runOnce: true });
 * await worker.done;
 * console.log(await client.getRun(runs[0]!.id));
 * await client.close();
 * ```
 */
export { FitqClient, type ClientOptions, type StageResult, type CleanOptions, type RetentionState } from './queue/client.js';
export { RETENTION_DEFAULTS, type Retention } from './queue/retention.js';
export type { StageRequest } from './queue/stage.js';
export type { RunChanges, UpdateOptions, UpdateResult, FieldChange } from './queue/update.js';
export { parseTimeLimit, parseTimeSignal, type TimeSignal } from './units/duration.js';
export type { ArrayRequest } from './queue/sweep.js';
export type { OutputFiles } from './queue/output-files.js';
export type { RunFilter, RunRecord, RunStatus } from './queue/run-record.js';
export { RUN_STATUSES } from './queue/run-record.js';
export type { WorkerRecord } from './queue/worker-record.js';
export type { LogEntry } from './queue/logs.js';
export { WaitIncompleteError, type WaitOptions } from './queue/wait.js';
export type { NotifyPayload } from './queue/notify.js';
export { FitqWorker, startWorker, type WorkerOptions } from './worker/worker.js';
export { renderNamespaceMetrics } from './metrics/namespace.js';
export {
  parseResourceSpec,
  parseResourceSpecs,
  formatResources,
  InvalidResourceSpecError,
  type Resources,
} from './resources/spec.js';
export { UsageError, ConnectionError } from './errors.js';
