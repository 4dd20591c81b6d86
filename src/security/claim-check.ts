/**
 * A signed run's demands are signed, but the claim reserves what the run's
 * staged index (its shape) says. Someone who can write to Redis could move a
 * signed run into a cheaper index; the worker catches that here, before the
 * run starts, by comparing what the claim reserved with the signed demands.
 */
import { MICROS_PER_UNIT } from '../resources/amount.js';
import { formatResources, type Resources } from '../resources/spec.js';

/** What the check reads of a claimed run (model/claimed-run.ts), each decoded once where the claim was read. */
export interface ClaimToCheck {
  /** Signed: the run's demands and the devices it is pinned to. */
  demands: Resources;
  pinnedGpus: readonly number[];
  /** The claim's: what it reserved of the worker and of the pool, and the devices it placed the run on. */
  reserved: Resources;
  pooled: Resources;
  devices: readonly number[];
}

/** Why the claim does not match the signed run, or undefined when it does. */
export function claimMismatch(claim: ClaimToCheck): string | undefined {
  const signed = new Map(claim.demands);
  const pinned = claim.pinnedGpus;
  const devices = claim.devices;
  // A pinned run without a gpu demand takes its devices whole on a worker with devices.
  if (pinned.length > 0 && devices.length > 0 && !signed.has('gpu')) signed.set('gpu', BigInt(pinned.length) * MICROS_PER_UNIT);
  const claimed = new Map([...claim.reserved, ...claim.pooled]);
  const same = claimed.size === signed.size && [...signed].every(([name, amount]) => claimed.get(name) === amount);
  if (!same) {
    return `rejected: the claim reserved '${formatResources(claimed) || 'nothing'}' but the signed run demands '${formatResources(signed) || 'nothing'}' (its staged index was altered)`;
  }
  if (pinned.length > 0 && devices.length > 0 && devices.join(',') !== pinned.join(',')) {
    return `rejected: the claim placed it on GPU devices ${devices.join(',')} but it is pinned to ${pinned.join(',')} (its staged index was altered)`;
  }
  return undefined;
}
