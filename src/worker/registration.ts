/**
 * What a worker registers: its capacity, limits and the BullMQ queue of this
 * registration. A new registration (after being fenced) gets a new token and
 * so a new queue: reapers may delete the old one.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { executorQueueName } from '../queue/executor-queue.js';
import type { WorkerRegistration } from '../queue/scripts.js';
import { formatResources } from '../resources/spec.js';
import type { ResolvedWorkerOptions } from './options.js';

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
    executorQueue: executorQueueName(options.name, token),
    devices: options.devices,
    policy: options.policy,
    gpuPlacement: options.gpuPlacement,
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
