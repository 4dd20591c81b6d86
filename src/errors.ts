/**
 * Errors users can act on. The CLI prints their message on one line, with no
 * stack trace; UsageError exits 2, the others 1 (exit-codes.ts).
 */
import { EXIT } from './exit-codes.js';

/** The user asked for something invalid (bad flag, unknown run, taken name). */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly exitCode = EXIT.usage;
}

/** Redis could not be reached. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  readonly exitCode = EXIT.failed;
}

/** Something did not happen in time (a worker that will not stop); exits 1. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  readonly exitCode = EXIT.failed;
}

/** A key fitq reads is not in fitq's format (written by someone else); exits 1. */
export class StoredDataError extends Error {
  override name = 'StoredDataError';
  readonly exitCode = EXIT.failed;
}

/** Redis took a write, but fewer replicas than --redis-wait-replicas asked for confirmed it in time (redis/replica-wait.ts); exits 1. */
export class UnreplicatedError extends Error {
  override name = 'UnreplicatedError';
  readonly exitCode = EXIT.failed;
}

/** This machine cannot do what a worker was asked to (`--enforce` without cgroups it may create): it does not start; exits 1. */
export class HostSupportError extends Error {
  override name = 'HostSupportError';
  readonly exitCode = EXIT.failed;
}

/** The GPU driver cannot be used (nvidia-smi says the driver is not loaded, or of another version than its library): `--gpus auto` is refused; exits 1. */
export class GpuDriverError extends Error {
  override name = 'GpuDriverError';
  readonly exitCode = EXIT.failed;
}
