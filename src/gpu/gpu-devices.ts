/**
 * The devices a worker hands out, from what `nvidia-smi -L` lists: each
 * GPU whole (its id: its index), or, on a MIG-enabled GPU, each of its MIG
 * devices (id 100 × (GPU index + 1) + the slice's index: GPU 0's slices are
 * 100, 101…, GPU 1's 200…). CUDA shows a process one MIG device at most,
 * so a run gets one slice (or a share of one), never two; and a slice is
 * named to CUDA by its UUID (`CUDA_VISIBLE_DEVICES=MIG-…`).
 */
import type { ListedGpu } from './nvidia-smi.js';

export const MIG_ID_BASE = 100;

export interface GpuDevice {
  /** fitq's id of it: what runs' `devices`, pins and `fitq workers` name. */
  id: number;
  /** The GPU it is, or is a slice of (nvidia-smi's index). */
  gpu: number;
  uuid: string;
  /** A MIG device: its profile (`1g.5gb`) and index on its GPU. */
  mig?: { profile: string; index: number };
}

export function migDeviceId(gpu: number, slice: number): number {
  return MIG_ID_BASE * (gpu + 1) + slice;
}

/** The devices of listed GPUs: a MIG-enabled GPU is its MIG devices. */
export function devicesOf(listed: readonly ListedGpu[]): GpuDevice[] {
  return listed.flatMap((gpu) =>
    gpu.mig.length === 0
      ? [{ id: gpu.index, gpu: gpu.index, uuid: gpu.uuid }]
      : gpu.mig.map((slice) => ({ id: migDeviceId(gpu.index, slice.index), gpu: gpu.index, uuid: slice.uuid, mig: { profile: slice.profile, index: slice.index } })),
  );
}

/** What CUDA_VISIBLE_DEVICES takes for a device: its index, or a MIG device's UUID. */
export function visibleAs(device: GpuDevice): string {
  return device.mig ? device.uuid : String(device.id);
}

/** How a device is named in messages: `GPU 1`, or `GPU 101 (MIG 1g.5gb 1 of GPU 0)`. */
export function deviceName(device: GpuDevice): string {
  return device.mig ? `GPU ${device.id} (MIG ${device.mig.profile} ${device.mig.index} of GPU ${device.gpu})` : `GPU ${device.id}`;
}
