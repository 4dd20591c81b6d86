/**
 * The stand-in nvidia-smi (test/fixtures/fake-gpu/nvidia-smi) for a test:
 * a state file it answers from, which the test changes while workers run,
 * and the environment that puts the stand-in first on PATH.
 */
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from './fitq.js';

export interface FakeGpu {
  name: string;
  uuid: string;
  memoryTotalMiB: number;
  memoryUsedMiB: number;
  lost?: boolean;
  /**
   * Its MIG devices, as -L lists them (gi, ci: its GPU and compute instance
   * ids, the older MIG-GPU-<uuid>/<gi>/<ci> form's parts), with their memory
   * (default: the profile's, 11 MiB used and what processes on it hold).
   */
  mig?: { profile: string; uuid: string; gi: number; ci?: number; memoryTotalMiB?: number; memoryUsedMiB?: number }[];
}

export interface FakeGpuState {
  gpus: FakeGpu[];
  /** Compute processes: on GPU `gpu` (its index), on a MIG-enabled one on its MIG device `slice` (an index into `mig`). */
  processes?: { gpu: number; slice?: number; pid: number; usedMiB: number; name: string }[];
  failure?: 'not-loaded' | 'nvml-missing' | 'mismatch' | 'unknown';
  driver?: string;
}

/** An A100 40GB as R535 names it, with the driver's few hundred MiB in use. */
export function a100(uuid: string): FakeGpu {
  return { name: 'NVIDIA A100-SXM4-40GB', uuid, memoryTotalMiB: 40960, memoryUsedMiB: 412 };
}

export interface FakeGpuBox {
  /** FAKE_GPU_STATE and a PATH with the stand-in first. */
  env: Record<string, string>;
  read(): FakeGpuState;
  /** Replaces the state at once (a rename: nvidia-smi never reads half a file). */
  write(state: FakeGpuState): void;
  change(alter: (state: FakeGpuState) => void): void;
}

export function fakeGpuBox(state: FakeGpuState): FakeGpuBox {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-fake-gpu-'));
  const file = join(dir, 'state.json');
  const box: FakeGpuBox = {
    env: { FAKE_GPU_STATE: file, PATH: `${FIXTURES}fake-gpu:${process.env.PATH}` },
    read: () => JSON.parse(readFileSync(file, 'utf8')) as FakeGpuState,
    write(next) {
      writeFileSync(`${file}.new`, JSON.stringify(next));
      renameSync(`${file}.new`, file);
    },
    change(alter) {
      const next = box.read();
      alter(next);
      box.write(next);
    },
  };
  box.write(state);
  return box;
}
