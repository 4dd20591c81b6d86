/**
 * The AMD devices a box has, for `--gpus auto` where there is no
 * nvidia-smi: amd-smi's list (ROCm 6 and later), else rocm-smi's cards
 * (older ROCm). Each device by the tool's index, which ROCR_VISIBLE_DEVICES
 * takes on a box whose devices are all visible (docs/gpus.md, AMD).
 */
import { execa } from 'execa';
import { AMD_SMI_LIST_ARGS, amdSmiFailure, parseAmdSmiList } from './amd-smi.js';
import { NVIDIA_SMI_TIMEOUT_MS } from './nvidia-smi.js';
import { parseRocmSmi, ROCM_SMI_ARGS, rocmSmiFailure } from './rocm-smi.js';

/** Devices found, by which tool; none: why (for the worker's warning); a driver the tool says is missing: `driver`. */
export type AmdListing = { devices: number[]; tool: string } | { devices: []; why: string; driver?: string };

async function ask(tool: string, args: readonly string[]): Promise<{ found: false } | { found: true; exitCode: number | undefined; stdout: string; stderr: string }> {
  const result = await execa(tool, args, { reject: false, timeout: NVIDIA_SMI_TIMEOUT_MS });
  if (result.failed && 'code' in result && result.code === 'ENOENT') return { found: false };
  return { found: true, exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

export async function listAmdGpus(): Promise<AmdListing> {
  const amdSmi = await ask('amd-smi', AMD_SMI_LIST_ARGS);
  if (amdSmi.found) {
    const failure = amdSmiFailure(amdSmi.exitCode, `${amdSmi.stderr}\n${amdSmi.exitCode === 0 ? '' : amdSmi.stdout}`);
    if (failure?.kind === 'driver') return { devices: [], why: `amd-smi failed: ${failure.message}`, driver: failure.message };
    if (failure) return { devices: [], why: `amd-smi failed: ${failure.message}` };
    try {
      const devices = parseAmdSmiList(amdSmi.stdout).map((gpu) => gpu.index);
      return devices.length > 0 ? { devices, tool: 'amd-smi' } : { devices: [], why: 'amd-smi lists no devices' };
    } catch (error) {
      return { devices: [], why: (error as Error).message };
    }
  }
  const rocmSmi = await ask('rocm-smi', ROCM_SMI_ARGS);
  if (!rocmSmi.found) return { devices: [], why: 'no GPU tool on PATH (nvidia-smi, amd-smi, rocm-smi)' };
  const failure = rocmSmiFailure(rocmSmi.exitCode, `${rocmSmi.stderr}\n${rocmSmi.stdout}`);
  if (failure?.kind === 'driver') return { devices: [], why: `rocm-smi failed: ${failure.message}`, driver: failure.message };
  try {
    const devices = parseRocmSmi(rocmSmi.stdout).map((card) => card.index);
    return devices.length > 0 ? { devices, tool: 'rocm-smi' } : { devices: [], why: failure ? `rocm-smi failed: ${failure.message}` : 'rocm-smi lists no devices' };
  } catch (error) {
    return { devices: [], why: failure ? `rocm-smi failed: ${failure.message}` : (error as Error).message };
  }
}
