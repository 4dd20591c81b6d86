/**
 * A worker's GPU devices: each whole, partly or not in use, and which runs
 * hold it (a run's `devices` are its CUDA_VISIBLE_DEVICES; a fractional
 * run holds a share of one device).
 */
import { html } from 'hono/html';
import type { RunRecord } from '../model/run-record.js';
import { probeStale, type WorkerRecord } from '../model/worker-record.js';
import type { DeviceReading } from '../gpu/device-reading.js';
import { formatMicros } from '../resources/amount.js';
import type { Html } from './layout.js';
import { runHref } from './run-links.js';

const WHOLE = 1_000_000n;

export type DeviceState = 'free' | 'partial' | 'busy';

export interface DeviceView {
  index: number;
  state: DeviceState;
  /** Micros of the device in use. */
  used: bigint;
  /** Runs holding it, by id. */
  runs: string[];
  /** The blocked head this worker holds it for, if the head is pinned to it. */
  heldFor?: string;
  /** What the worker's GPU probe last read of it (a worker that probes): a device busy, lost or stale takes no run. */
  probe?: { state: DeviceReading['state'] | 'stale'; why?: string; reading?: DeviceReading };
}

export function deviceViews(worker: WorkerRecord, runs: readonly RunRecord[]): DeviceView[] {
  return [...worker.devices].map(([index, free]) => {
    const used = WHOLE - free;
    const holders = runs.filter((run) => run.worker === worker.name && run.status === 'running' && run.devices?.includes(index)).map((run) => run.id);
    const heldFor = worker.holding?.gpus.includes(index) ? worker.holding.runId : undefined;
    const reading = worker.gpuProbe?.devices.get(index);
    const probe: DeviceView['probe'] = worker.gpuProbe === undefined
      ? undefined
      : probeStale(worker)
        ? { state: 'stale', why: 'the worker\'s GPU reading is too old: no run is placed on it', ...(reading ? { reading } : {}) }
        : reading
          ? { state: reading.state, ...(reading.why === undefined ? {} : { why: reading.why }), reading }
          : { state: 'stale', why: 'no reading of it' };
    return {
      ...(probe === undefined ? {} : { probe }),
      index,
      state: free >= WHOLE ? 'free' : free <= 0n ? 'busy' : 'partial',
      used,
      runs: holders,
      ...(heldFor === undefined ? {} : { heldFor }),
    };
  });
}

/** The map of a worker of namespace `queue`, each run holding a device a link to its page. */
export function gpuMap(queue: string, worker: WorkerRecord, runs: readonly RunRecord[]): Html {
  const devices = deviceViews(worker, runs);
  if (devices.length === 0) return html``;
  return html`<div class="section-label">GPU devices</div>
<div class="gpus" data-testid="gpus-${worker.name}">
${devices.map((device) => {
  const share = Number((device.used * 1000n) / WHOLE) / 10;
  const label = device.state === 'free' ? 'free' : device.state === 'busy' ? 'whole in use' : `${formatMicros(device.used)} in use`;
  const probe = device.probe;
  const outside = probe && probe.state !== 'ok' ? ({ busy: 'foreign process', lost: 'lost', stale: 'stale reading' } as const)[probe.state] : undefined;
  return html`<div class="gpu" data-testid="gpu-${worker.name}-${device.index}" data-state="${device.state}" data-probe="${probe?.state ?? ''}" data-runs="${device.runs.join(' ')}" title="${device.runs.length > 0 ? `held by ${device.runs.join(', ')}` : 'free'}">
  <span class="gpu-id">gpu ${device.index}</span>
  <span class="gpu-state">${label}</span>
  ${outside === undefined ? '' : html`<span class="gpu-outside" data-testid="gpu-why-${worker.name}-${device.index}" title="${probe?.why ?? ''}">${outside}: ${probe?.why ?? ''}</span>`}
  ${probe?.reading ? memoryLine(probe.reading) : ''}
  ${device.runs.map((id) => html`<a class="gpu-run" href="${runHref(queue, id)}">${id}</a>`)}
  ${device.heldFor === undefined ? '' : html`<span class="gpu-run" title="held for the blocked head">for <a href="${runHref(queue, device.heldFor)}">${device.heldFor}</a></span>`}
  <span class="meter"><span style="width: ${share}%"></span></span>
</div>`;
})}
</div>`;
}

/**
 * `12.0 of 40.0 GiB used (fitq's runs 1.4, not fitq's 10.6), 35 % busy`,
 * as the probe read it: the rest of what is used is the driver's.
 */
function memoryLine(reading: DeviceReading): Html | string {
  if (reading.totalMiB === undefined) return '';
  const gib = (mib: number) => (mib / 1024).toFixed(1);
  const memory = reading.usedMiB === undefined ? `${gib(reading.totalMiB)} GiB` : `${gib(reading.usedMiB)} of ${gib(reading.totalMiB)} GiB used`;
  const runsMiB = Object.values(reading.runsMiB ?? {}).reduce((sum, mib) => sum + mib, 0);
  const split = [...(runsMiB ? [`fitq's runs ${gib(runsMiB)}`] : []), ...(reading.foreignMiB ? [`not fitq's ${gib(reading.foreignMiB)}`] : [])];
  const foreign = split.length > 0 ? ` (${split.join(', ')})` : '';
  const busy = reading.utilization === undefined ? '' : `, ${reading.utilization} % busy`;
  return html`<span class="gpu-memory">${memory}${foreign}${busy}</span>`;
}
