/**
 * Which GPU devices a worker assigns runs to: `--gpus auto` (the devices
 * `nvidia-smi -L` lists, limited by the worker's own CUDA_VISIBLE_DEVICES),
 * `none`, or a list like `0,1,3`.
 */
import { execa } from 'execa';
import { parseDeviceList } from '../resources/devices.js';

export type GpuOption = 'auto' | 'none' | string | readonly number[];

/** `nvidia-smi -L` lines: "GPU 0: NVIDIA A100 (UUID: GPU-…)" -> [{index, uuid}]. */
export function parseNvidiaSmi(output: string): { index: number; uuid: string }[] {
  const devices: { index: number; uuid: string }[] = [];
  for (const line of output.split('\n')) {
    const match = /^GPU (\d+):.*?(?:\(UUID: ([^)]+)\))?\s*$/.exec(line.trim());
    if (match) devices.push({ index: Number(match[1]), uuid: match[2] ?? '' });
  }
  return devices;
}

/** The devices `nvidia-smi -L` lists that CUDA_VISIBLE_DEVICES (indices or UUIDs) allows; none without nvidia-smi. */
export async function detectGpus(env: NodeJS.ProcessEnv = process.env): Promise<number[]> {
  const result = await execa('nvidia-smi', ['-L'], { reject: false, env, timeout: 10_000 });
  if (result.exitCode !== 0) return [];
  const listed = parseNvidiaSmi(String(result.stdout));
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible === undefined) return listed.map((device) => device.index);
  const allowed = new Set(visible.split(',').map((entry) => entry.trim()).filter(Boolean));
  return listed.filter((device) => allowed.has(String(device.index)) || allowed.has(device.uuid)).map((device) => device.index);
}

export async function resolveGpus(option: GpuOption | undefined): Promise<number[]> {
  if (option === undefined || option === 'none') return [];
  if (option === 'auto') return detectGpus();
  const list = typeof option === 'string' ? option : option.join(',');
  return parseDeviceList(list, '--gpus', 'auto, none or device indices like 0,1,3');
}
