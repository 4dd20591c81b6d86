/**
 * One look at a worker's GPU devices through nvidia-smi: each device's
 * memory (total, used by everything) and the compute processes on it that
 * are foreign, i.e. neither one of the worker's runs (a process whose
 * environment holds the run token of a run it runs: daemons a run started
 * included) nor on the worker's ignore list. Memory the driver reserves on
 * an idle device is used memory, not a process. When some devices are lost
 * nvidia-smi answers no query about any device, so each of the worker's
 * devices is then asked about alone (`-i`): the lost ones are listed as
 * such, the others read as usual. A failure says the driver as a whole (or
 * nvidia-smi itself) failed.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { basename, delimiter, join } from 'node:path';
import { execa } from 'execa';
import { MIG_REPORT_ARGS, parseMigReport, type MigGpuReport } from './nvidia-smi-xml.js';
import {
  COMPUTE_APPS_QUERY,
  GPU_QUERY,
  NVIDIA_SMI_TIMEOUT_MS,
  nvidiaSmiFailure,
  parseComputeApps,
  parseGpuQuery,
  type NvidiaSmiFailure,
} from './nvidia-smi.js';

/** A compute process fitq did not start, on a device. */
export interface ForeignProcess {
  pid: number;
  /** As nvidia-smi names it: a path, a short name, or `[Not Found]`. */
  name: string;
  usedMiB: number | undefined;
}

export interface ProbedDevice {
  index: number;
  uuid: string;
  name: string;
  /** See busIdKey: what a failure names a lost device by. */
  busId: string;
  totalMiB: number | undefined;
  usedMiB: number | undefined;
  /** GPU utilisation, %. */
  utilization: number | undefined;
  foreign: ForeignProcess[];
  /** Memory the worker's own runs' processes use on it (MiB), by run id. */
  own: Record<string, number>;
  /** Measures nvidia-smi did not give, with what it said instead. */
  unread: Record<string, string>;
  /** On a MIG-enabled GPU the probe was asked about (ProbeOptions.migGpus): its MIG devices, each read on its own. */
  slices?: ProbedSlice[];
}

/** A MIG device as the probe reads it: its own memory and processes (`-L`'s `Device N` is its index). */
export interface ProbedSlice {
  index: number;
  totalMiB: number | undefined;
  usedMiB: number | undefined;
  foreign: ForeignProcess[];
  own: Record<string, number>;
  unread: Record<string, string>;
}

/** A device nvidia-smi could not reach (fallen off the bus): its index, and what nvidia-smi said. */
export interface LostDevice {
  index: number;
  message: string;
}

/** `tool`: which tool read the devices (nvidia-smi when not said), for what a reading says of them. */
export type ProbeResult =
  | { ok: true; devices: ProbedDevice[]; lost: LostDevice[]; tool?: string }
  | { ok: false; failure: NvidiaSmiFailure; tool?: string };

/** Processes the worker leaves alone on its devices (`--gpu-ignore-process NAME|PID`), as gflow's ignore list. */
export interface IgnoredProcesses {
  names: ReadonlySet<string>;
  pids: ReadonlySet<number>;
}

export interface ProbeOptions {
  /** The run of this worker a process belongs to, if any. */
  ownerOf: (pid: number) => Promise<string | undefined>;
  ignored: IgnoredProcesses;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** The devices asked about one by one when some are lost (the worker's); default: none, the failure is returned. */
  devices?: readonly number[];
  /** The MIG-enabled GPUs whose slices the worker hands out: each slice is read on its own (nvidia-smi's full report of them). */
  migGpus?: readonly number[];
}

/** Whether the process is on the ignore list, by pid or by its name (the program's file name, or as given). */
export function isIgnored(process: { pid: number; name: string }, ignored: IgnoredProcesses): boolean {
  return ignored.pids.has(process.pid) || ignored.names.has(process.name) || ignored.names.has(basename(process.name));
}

async function nvidiaSmi(args: string[], options: ProbeOptions): Promise<{ ok: true; stdout: string } | { ok: false; failure: NvidiaSmiFailure }> {
  const result = await execa('nvidia-smi', args, { reject: false, env: options.env, timeout: options.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS });
  if (result.exitCode === 0) return { ok: true, stdout: String(result.stdout) };
  if (result.timedOut) return { ok: false, failure: { kind: 'other', message: `no answer within ${(options.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS) / 1000} s` } };
  // Not started at all (missing, not executable) or killed: the driver's tool cannot be used.
  if (result.exitCode === undefined) return { ok: false, failure: { kind: 'driver', message: `nvidia-smi could not run: ${result.shortMessage ?? 'no reason given'}` } };
  return { ok: false, failure: nvidiaSmiFailure(result.exitCode, `${String(result.stdout)}\n${String(result.stderr)}`) };
}

/** Probes every device nvidia-smi sees (the caller keeps those the worker assigns). */
export async function probeNvidia(options: ProbeOptions): Promise<ProbeResult> {
  const all = await probeDevices(undefined, options);
  if (all.ok || all.failure.kind !== 'lost' || !options.devices?.length) return all;
  // Some devices are lost: ask about each alone, so the others still read.
  const devices: ProbedDevice[] = [];
  const lost: LostDevice[] = [];
  for (const index of options.devices) {
    const one = await probeDevices(index, options);
    if (one.ok) devices.push(...one.devices);
    else if (one.failure.kind === 'lost') lost.push({ index, message: one.failure.message });
    else return one;
  }
  return { ok: true, devices, lost };
}

/** One look through nvidia-smi at one device (`-i N`) or, `only` undefined, all of them. */
async function probeDevices(only: number | undefined, options: ProbeOptions): Promise<ProbeResult> {
  const select = only === undefined ? [] : ['-i', String(only)];
  const migGpus = (options.migGpus ?? []).filter((index) => only === undefined || only === index);
  const [gpus, apps, migReport] = await Promise.all([
    nvidiaSmi([...select, `--query-gpu=${GPU_QUERY.join(',')}`, '--format=csv,noheader,nounits'], options),
    nvidiaSmi([...select, `--query-compute-apps=${COMPUTE_APPS_QUERY.join(',')}`, '--format=csv,noheader,nounits'], options),
    migGpus.length === 0 ? undefined : nvidiaSmi([...MIG_REPORT_ARGS, '-i', migGpus.join(',')], options),
  ]);
  if (!gpus.ok) return gpus;
  if (!apps.ok) return apps;
  const reports = migReport?.ok ? parseMigReport(migReport.stdout) : new Map<string, MigGpuReport>();
  // A MIG-enabled GPU's processes come from its report, by slice; the CSV names only their GPU.
  const processes: DeviceProcess[] = [
    ...parseComputeApps(apps.stdout)
      .filter((app) => !reports.has(app.gpuUuid))
      .map((app) => ({ device: app.gpuUuid, pid: app.pid, name: app.processName, usedMiB: app.usedMiB })),
    ...[...reports.values()].flatMap((report) =>
      report.processes.map(({ slice, ...process }) => ({ device: slice === undefined ? report.uuid : sliceKey(report.uuid, slice), ...process })),
    ),
  ];
  const { foreign, own } = await sortProcesses(processes, options);
  const devices = parseGpuQuery(gpus.stdout).map((gpu): ProbedDevice => {
    const report = reports.get(gpu.uuid);
    const unread = migReport && !migReport.ok && migGpus.includes(gpu.index) ? { ...gpu.unread, 'mig devices': migReport.failure.message } : gpu.unread;
    return {
      index: gpu.index,
      uuid: gpu.uuid,
      name: gpu.name,
      busId: gpu.busId,
      totalMiB: gpu.memoryTotalMiB,
      usedMiB: gpu.memoryUsedMiB,
      utilization: gpu.utilizationPercent,
      foreign: foreign.get(gpu.uuid) ?? [],
      own: own.get(gpu.uuid) ?? {},
      unread,
      ...(report
        ? {
            slices: report.slices.map((slice) => ({
              index: slice.index,
              totalMiB: slice.totalMiB,
              usedMiB: slice.usedMiB,
              foreign: foreign.get(sliceKey(gpu.uuid, slice.index)) ?? [],
              own: own.get(sliceKey(gpu.uuid, slice.index)) ?? {},
              unread: slice.unread,
            })),
          }
        : {}),
    };
  });
  return { ok: true, devices, lost: [] };
}

/** How processes on a MIG device are grouped while sorted: its GPU's UUID and its index. */
const sliceKey = (gpuUuid: string, slice: number): string => `${gpuUuid}#${slice}`;

/** A compute process on a device (by the key the tool gives it: nvidia-smi's UUID, amd-smi's index). */
export interface DeviceProcess extends ForeignProcess {
  device: string;
}

/**
 * The processes on the devices, sorted: the worker's own runs' (memory per
 * run, by device), the ignored ones (left out), and the foreign ones (by device).
 */
export async function sortProcesses(
  processes: readonly DeviceProcess[],
  options: ProbeOptions,
): Promise<{ foreign: Map<string, ForeignProcess[]>; own: Map<string, Record<string, number>> }> {
  const foreign = new Map<string, ForeignProcess[]>();
  const own = new Map<string, Record<string, number>>();
  for (const { device, ...process } of processes) {
    const owner = await options.ownerOf(process.pid);
    if (owner !== undefined) {
      const runs = own.get(device) ?? {};
      runs[owner] = (runs[owner] ?? 0) + (process.usedMiB ?? 0);
      own.set(device, runs);
      continue;
    }
    if (isIgnored(process, options.ignored)) continue;
    foreign.set(device, [...(foreign.get(device) ?? []), process]);
  }
  return { foreign, own };
}

/** Whether `tool` is an executable file on PATH. */
export async function toolFound(tool: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (await access(join(dir, tool), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}

/** Whether nvidia-smi is an executable file on PATH. */
export const nvidiaSmiFound = (env: NodeJS.ProcessEnv = process.env): Promise<boolean> => toolFound('nvidia-smi', env);

/** How a busy device is shown: `used by a process fitq did not start (pid 4242, python, 21.3 GiB)`. */
export function describeForeign(processes: readonly ForeignProcess[]): string {
  const [first, ...more] = processes;
  if (!first) return 'free of processes fitq did not start';
  const memory = first.usedMiB === undefined ? '' : `, ${(first.usedMiB / 1024).toFixed(1)} GiB`;
  const others = more.length === 0 ? '' : ` and ${more.length} more`;
  return `used by a process fitq did not start (pid ${first.pid}, ${basename(first.name)}${memory})${others}`;
}
