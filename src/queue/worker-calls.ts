/** What the scripts of a worker's life take and give: its registration, a stop request, a run's end. */
import type { ClaimLimits, GpuPlacement } from './claim-reply.js';

/** How a worker is asked to stop: let its runs finish, or terminate them first. */
export type StopMode = 'graceful' | 'now';

export interface WorkerRegistration {
  name: string;
  token: string;
  leaseMs: number;
  concurrency: number;
  host: string;
  pid: number;
  /** Capacity, "a=1 b=2". */
  resources: string;
  /** GPU device indices the worker assigns runs to. */
  devices?: readonly number[];
  /** Its claim policy, shown to users judging why runs wait. */
  policy?: string;
  /** How it places fractional gpu demands on its devices. */
  gpuPlacement?: GpuPlacement;
  /** Registers drained: a worker process registering again after `fitq drain`. */
  drained?: boolean;
  /** Time limits its claims apply (ms): see ClaimLimits. */
  timeLimits?: ClaimLimits;
  /** How old its GPU probe's reading may be for its devices to take runs (ms; undefined: it does not probe). */
  gpuProbeStaleMs?: number;
  /** Its devices that are MIG devices: a run gets one of them at most (CUDA shows a process one). */
  migDevices?: readonly number[];
}

export interface FinishInput {
  runId: string;
  worker: string;
  /** The registration token of the worker: only a live registration may record. */
  token: string;
  epoch: string;
  /**
   * `stopped`: its worker terminated it (or never started it) because the worker was stopped;
   * `returned`: its worker could not start it for want of its own means (out of file descriptors): put back, no retry spent;
   * `preempted`: its worker stopped it because a claim preempted it: put back at its place, no retry spent.
   */
  status: 'completed' | 'failed' | 'canceled' | 'rejected' | 'timeout' | 'stopped' | 'returned' | 'preempted';
  exitCode?: number | undefined;
  signal?: string | undefined;
  reason: string;
  /** What the run used (model/run-usage.ts, encodeRunUsage), if its worker measured it. */
  usage?: string | undefined;
}

/**
 * What finishRun did: recorded the end (a stopped run: re-staged or lost);
 * found the run no longer held by this claim (`status`: what it is now,
 * undefined when it is gone); or refused a worker whose registration is gone
 * or whose lease has run out.
 */
export type FinishResult =
  | { outcome: 'recorded'; status: 'completed' | 'failed' | 'canceled' | 'rejected' | 'timeout' | 'staged' | 'lost' }
  | { outcome: 'movedOn'; status: string | undefined }
  | { outcome: 'fenced' };
