/**
 * A signed run's demands are signed, but the claim reserves what the run's
 * staged index (its shape) says. Someone who can write to Redis could move a
 * signed run into a cheaper index; the worker catches that here, before the
 * run starts, by comparing what the claim reserved with the signed demands.
 */
import { MICROS_PER_UNIT } from '../resources/amount.js';
import { formatResources, parseStoredResources } from '../resources/spec.js';

/** Why the claim does not match the signed run, or undefined when it does. */
export function claimMismatch(fields: Readonly<Record<string, string | undefined>>): string | undefined {
  const signed = new Map(parseStoredResources(fields.resources));
  const pinned = fields.gpus ? fields.gpus.split(',') : [];
  const devices = fields.devices ? fields.devices.split(',') : [];
  // A pinned run without a gpu demand takes its devices whole on a worker with devices.
  if (pinned.length > 0 && devices.length > 0 && !signed.has('gpu')) signed.set('gpu', BigInt(pinned.length) * MICROS_PER_UNIT);
  const claimed = new Map([...parseStoredResources(fields.reserved), ...parseStoredResources(fields.pooled)]);
  const same = claimed.size === signed.size && [...signed].every(([name, amount]) => claimed.get(name) === amount);
  if (!same) {
    return `rejected: the claim reserved '${formatResources(claimed) || 'nothing'}' but the signed run demands '${formatResources(signed) || 'nothing'}' (its staged index was altered)`;
  }
  if (pinned.length > 0 && devices.length > 0 && devices.join(',') !== pinned.join(',')) {
    return `rejected: the claim placed it on GPU devices ${devices.join(',')} but it is pinned to ${pinned.join(',')} (its staged index was altered)`;
  }
  return undefined;
}
