/** What an executor is given by its worker: where it records, its settings, and whom it tells. */
import type { RequestCheck } from './request-check.js';
import type { ReplicaConfirm } from './replica-confirm.js';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { Scripts } from '../queue/scripts.js';
import type { ClaimLimits } from '../queue/claim-reply.js';
import type { EscapedSweep } from './escaped-sweep.js';
import type { LogFormat } from './logger.js';
import type { UsageMeter } from './usage/usage-meter.js';

import type { GpuVendor } from './gpus.js';

export interface ExecutorContext {
  keys: NamespaceKeys;
  scripts: Scripts;
  logger: Logger;
  workerName: string;
  /** The token of the registration this executor runs for: its writes are refused once that is gone. */
  token: string;
  killGraceMs: number;
  /** The worker's time limits, for runs staged without one. */
  timeLimits: ClaimLimits;
  logMaxLines: number;
  echoOutput: boolean;
  logFormat: LogFormat;
  /** Called after a run has ended and been recorded. */
  onRunEnded: () => void;
  /** Called when a run's process has been let go. */
  onRunStarted?: () => void;
  /** Called when a run could not start because this worker ran out of something of its own (see shortage.ts), with why. */
  onShortage?: (reason: string) => void;
  /** Called once a run's end is recorded and it ended (not re-staged), with its fields as claimed (notifications). */
  onRunRecorded?: (runId: string, fields: Readonly<Record<string, string>>, status: string) => void;
  /**
   * Whether to stop retrying writes Redis refused (a run's end, its output):
   * the worker has let go of its lease, so nothing it writes can land.
   */
  givenUp: () => boolean;
  /**
   * Shared secret: runs not signed with it end `rejected` without starting.
   * Without one, every run runs (signed or not).
   */
  secret?: Buffer | undefined;
  /**
   * With --require-signed: the key registered for a user (security/user-keys.ts);
   * runs not signed by their user's registered key end `rejected` without
   * starting. Without, runs need no user signature.
   */
  userKeyOf?: ((user: string) => Promise<string | undefined>) | undefined;
  /** With --require-signed: proves what others asked of a run (request-check.ts); a run whose release or restart is not proven ends `rejected`. */
  requestCheck?: RequestCheck | undefined;
  /** The worker's environment as its runs inherit it (see run-env.ts), read once (reading process.env is slow). */
  inheritedEnv: Record<string, string>;
  /** Start runs under the keeper that kills what escapes their process group (see subreaper.ts). */
  reapEscaped: boolean;
  /** Which variable names a run's GPU devices: CUDA_VISIBLE_DEVICES (nvidia) or ROCR_VISIBLE_DEVICES (amd). */
  gpuVendor?: GpuVendor;
  /** What CUDA_VISIBLE_DEVICES names each device by, where not its id (a MIG device: its UUID). */
  deviceNames?: ReadonlyMap<number, string>;
  /** Kills what a run left behind once its main process has exited, found by its token (see escaped-sweep.ts). */
  sweep: EscapedSweep;
  /** Replicas that must confirm a claim before its run starts, and its end (see replica-confirm.ts), if any. */
  replicas?: ReplicaConfirm | undefined;
  /** Measures what runs use, in cgroups that hold them to their demands where the worker has them (see usage/). */
  usage: UsageMeter;
}
