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
export { FitqClient, type ClientOptions, type StageResult, type CleanOptions, type RetentionState } from './client.js';
export { RETENTION_DEFAULTS, type Retention } from './model/retention.js';
export type { StageRequest } from './model/stage.js';
export type { RunChanges, FieldChange } from './model/run-edits.js';
export type { UpdateOptions, UpdateResult } from './operations/update.js';
export type { FairShareChange } from './operations/fair-share.js';
export type { FairShareState, FairShareUser } from './model/fair-share.js';
export { parseTimeLimit, parseTimeSignal, type TimeSignal } from './units/duration.js';
export type { ArrayRequest } from './model/stage.js';
export type { OutputFiles } from './model/output-files.js';
export type { RunFilter, RunRecord, RunStatus } from './model/run-record.js';
export { RUN_STATUSES } from './model/run-record.js';
export type { WorkerRecord } from './model/worker-record.js';
export type { LogEntry } from './model/logs.js';
export { WaitIncompleteError, type WaitOptions } from './operations/wait.js';
export type { NotifyPayload } from './model/notify.js';
export { FitqWorker, startWorker, type WorkerOptions } from './worker/worker.js';
export { renderNamespaceMetrics } from './metrics/namespace.js';
export {
  parseResourceSpec,
  parseResourceSpecs,
  parseDemands,
  Demands,
  formatResources,
  InvalidResourceSpecError,
  type Resources,
} from './resources/spec.js';
export { UsageError, ConnectionError, UnreplicatedError } from './errors.js';
export type { ReplicaWait } from './redis/replica-wait.js';
