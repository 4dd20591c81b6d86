/**
 * One look at a worker's AMD devices through amd-smi (ROCm 6 and later), as
 * probe.ts looks at NVIDIA ones: each device's VRAM (total, used by
 * everything) and GFX activity from `amd-smi metric`, and the processes on
 * it from `amd-smi process`, sorted into the worker's own runs', ignored
 * ones and foreign ones. amd-smi keys both by its own index, the worker's
 * device id. A device the metric no longer lists reads lost; amd-smi has no
 * per-device "fell off the bus" answer as nvidia-smi has. rocm-smi (older
 * ROCm) is not probed.
 */
import { execa } from 'execa';
import { AMD_SMI_METRIC_ARGS, AMD_SMI_PROCESS_ARGS, amdSmiFailure, parseAmdSmiMetric, parseAmdSmiProcesses } from './amd-smi.js';
import { NVIDIA_SMI_TIMEOUT_MS, type NvidiaSmiFailure } from './nvidia-smi.js';
import { sortProcesses, type ProbeOptions, type ProbeResult } from './probe.js';

const TOOL = 'amd-smi';
const MIB = 1_048_576;

async function amdSmi(args: readonly string[], options: ProbeOptions): Promise<{ ok: true; stdout: string } | { ok: false; failure: NvidiaSmiFailure }> {
  const timeoutMs = options.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS;
  const result = await execa(TOOL, args, { reject: false, env: options.env, timeout: timeoutMs });
  if (result.exitCode === 0) return { ok: true, stdout: String(result.stdout) };
  if (result.timedOut) return { ok: false, failure: { kind: 'other', message: `no answer within ${timeoutMs / 1000} s` } };
  if (result.exitCode === undefined) return { ok: false, failure: { kind: 'driver', message: `amd-smi could not run: ${result.shortMessage ?? 'no reason given'}` } };
  const failure = amdSmiFailure(result.exitCode, `${String(result.stderr)}\n${String(result.stdout)}`);
  // No device found at all (the driver up): each of the worker's devices is gone, as a lost one is.
  return { ok: false, failure: { kind: failure?.kind === 'driver' ? 'driver' : 'other', message: failure?.message ?? `exit code ${result.exitCode}` } };
}

/** Probes every device amd-smi sees (the caller keeps those the worker assigns). */
export async function probeAmd(options: ProbeOptions): Promise<ProbeResult> {
  const [metric, processes] = await Promise.all([amdSmi(AMD_SMI_METRIC_ARGS, options), amdSmi(AMD_SMI_PROCESS_ARGS, options)]);
  if (!metric.ok) return { ...metric, tool: TOOL };
  if (!processes.ok) return { ...processes, tool: TOOL };
  let readings;
  let listed;
  try {
    readings = parseAmdSmiMetric(metric.stdout);
    listed = parseAmdSmiProcesses(processes.stdout);
  } catch (error) {
    return { ok: false, failure: { kind: 'other', message: (error as Error).message }, tool: TOOL };
  }
  const { foreign, own } = await sortProcesses(
    listed.map((process) => ({
      device: String(process.gpuIndex),
      pid: process.pid,
      name: process.name,
      usedMiB: process.usedBytes === undefined ? undefined : process.usedBytes / MIB,
    })),
    options,
  );
  const devices = readings.map((reading) => ({
    index: reading.index,
    uuid: '',
    name: 'AMD GPU',
    busId: '',
    totalMiB: reading.totalBytes === undefined ? undefined : reading.totalBytes / MIB,
    usedMiB: reading.usedBytes === undefined ? undefined : reading.usedBytes / MIB,
    utilization: reading.utilization,
    foreign: foreign.get(String(reading.index)) ?? [],
    own: own.get(String(reading.index)) ?? {},
    unread: reading.unread,
  }));
  return { ok: true, devices, lost: [], tool: TOOL };
}
