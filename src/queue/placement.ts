/**
 * GPU device placement as the claim script decides it (claimRun-9.lua), so
 * that `fitq runs` can say why a run waits for devices. The claim alone
 * places runs; this only explains.
 */
import { MICROS_PER_UNIT } from '../resources/amount.js';
import type { GpuPlacement } from './scripts.js';

/** Device index -> free share in micros (1,000,000 = the whole device). */
export type DeviceShares = ReadonlyMap<number, bigint>;

/** A gpu demand (micros) and the devices it is pinned to (empty: any). */
export interface GpuNeed {
  gpu: bigint;
  pinned: readonly number[];
}

/** The devices a demand gets, and the share it takes of each. */
export interface Placement {
  ids: number[];
  share: bigint;
}

/**
 * Where a gpu demand goes now, leaving the `spare` devices alone; undefined
 * when it cannot be placed now. A whole N takes the N lowest entirely free
 * devices; a fraction one device, the fullest that fits (pack) or the
 * emptiest (spread), ties to the lowest index; a pinned run its own devices.
 */
export function placeOnDevices(
  need: GpuNeed,
  devices: DeviceShares,
  mode: GpuPlacement,
  spare: ReadonlySet<number> = new Set(),
): Placement | undefined {
  const whole = need.gpu % MICROS_PER_UNIT === 0n;
  const share = whole ? MICROS_PER_UNIT : need.gpu;
  const usable = (id: number, atLeast: bigint) => !spare.has(id) && (devices.get(id) ?? -1n) >= atLeast;
  if (need.pinned.length > 0) return need.pinned.every((id) => usable(id, share)) ? { ids: [...need.pinned], share } : undefined;
  const ids = [...devices.keys()].sort((a, b) => a - b);
  if (whole) {
    const chosen = ids.filter((id) => usable(id, MICROS_PER_UNIT)).slice(0, Number(need.gpu / MICROS_PER_UNIT));
    return chosen.length === Number(need.gpu / MICROS_PER_UNIT) ? { ids: chosen, share } : undefined;
  }
  let best: number | undefined;
  for (const id of ids) {
    if (!usable(id, share)) continue;
    const free = devices.get(id)!;
    const bestFree = best === undefined ? undefined : devices.get(best)!;
    if (bestFree === undefined || (mode === 'spread' ? free > bestFree : free < bestFree)) best = id;
  }
  return best === undefined ? undefined : { ids: [best], share };
}

function shifted(devices: DeviceShares, placement: Placement, sign: -1n | 1n): DeviceShares {
  const after = new Map(devices);
  for (const id of placement.ids) after.set(id, (after.get(id) ?? 0n) + sign * placement.share);
  return after;
}

/** Why a later run's gpu demand may not go beside the blocked head, as the claim judges it. */
export type HeldDevices = { kind: 'pinned'; ids: readonly number[] } | { kind: 'unplaceable' } | { kind: 'eaten' };

/**
 * Whether a later run's gpu demand may be placed beside the worker's blocked
 * head: a pinned head keeps its devices; an unpinned head that can be placed
 * now must still be placeable after the run takes its devices (first tried
 * on what the head's own placement leaves); one that cannot be placed now
 * lets later runs take no device. Undefined when the run may go there.
 */
export function heldDevices(run: GpuNeed, head: GpuNeed, devices: DeviceShares, mode: GpuPlacement): HeldDevices | undefined {
  if (head.pinned.length > 0) {
    const spare = new Set(head.pinned);
    return placeOnDevices(run, devices, mode, spare) ? undefined : { kind: 'pinned', ids: head.pinned };
  }
  const headPlacement = placeOnDevices(head, devices, mode);
  if (!headPlacement) return { kind: 'unplaceable' };
  if (placeOnDevices(run, shifted(devices, headPlacement, -1n), mode)) return undefined;
  const placement = placeOnDevices(run, devices, mode);
  if (placement && placeOnDevices(head, shifted(devices, placement, -1n), mode)) return undefined;
  return { kind: 'eaten' };
}
