/**
 * What a worker registers: its capacity and limits, under a fresh token (a
 * new registration after being fenced gets a new one, fencing the old).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WorkerRegistration } from '../queue/worker-calls.js';
import { formatResources } from '../resources/spec.js';
import type { ResolvedWorkerOptions } from './options.js';
import { gpuStaleMs } from './gpu-watch.js';

export function registrationFor(options: ResolvedWorkerOptions): WorkerRegistration {
  const token = randomBytes(8).toString('hex');
  return {
    name: options.name,
    token,
    leaseMs: options.leaseMs,
    concurrency: options.concurrency,
    host: hostname(),
    pid: process.pid,
    resources: formatResources(options.resources),
    devices: options.devices,
    policy: options.policy,
    gpuPlacement: options.gpuPlacement,
    timeLimits: options.timeLimits,
    ...(options.gpuProbe.intervalMs > 0 ? { gpuProbeStaleMs: gpuStaleMs(options.gpuProbe.intervalMs) } : {}),
    migDevices: options.gpuDevices.filter((device) => device.mig).map((device) => device.id),
  };
}

/** Resolves with the promise's value, or undefined after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
