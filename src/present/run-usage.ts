/**
 * What a run used beside what it booked, as `fitq runs show` and the
 * dashboard's run page say it: `cpu time 12.4s (user 11.9s, system 0.5s),
 * 0.41 CPUs on average; cpu=1 booked`, `memory 11.2G peak; mem=8G booked`,
 * and how it was measured.
 */
import type { RunRecord } from '../model/run-record.js';
import type { RunUsage } from '../model/run-usage.js';
import { USAGE_SAMPLE_MS } from '../model/run-usage.js';
import { formatHumanAmount, MICROS_PER_UNIT, parseDecimal } from '../resources/amount.js';
import { formatBytes } from '../units/bytes.js';
import { formatDuration } from '../units/time.js';

/** A demand as booked (`mem=8G`), from the record's amounts; undefined when it demands none. */
function booked(run: RunRecord, name: string): string | undefined {
  const amount = run.resources[name];
  if (amount === undefined) return undefined;
  // (Amounts are exact decimals with at most 6 places: the record's number prints back to them.)
  const micros = Number.isInteger(amount) ? BigInt(amount) * MICROS_PER_UNIT : parseDecimal(amount.toFixed(6).replace(/\.?0+$/, ''));
  return `${name}=${formatHumanAmount(micros)}`;
}

/** `…; mem=8G booked` (`, enforced` when its cgroup held it to that). */
function withBooked(text: string, run: RunRecord, name: string, enforced: boolean): string {
  const demand = booked(run, name);
  return demand ? `${text}; ${demand} booked${enforced ? ', enforced' : ''}` : text;
}

/** `12.4s (user 11.9s, system 0.5s), 0.41 CPUs on average`. */
function cpuText(usage: RunUsage): string {
  const total = usage.cpuUserMs + usage.cpuSystemMs;
  const average = usage.wallMs > 0 ? `, ${(total / usage.wallMs).toFixed(2)} CPUs on average` : '';
  return `${formatDuration(total) || '0ms'} (user ${formatDuration(usage.cpuUserMs) || '0ms'}, system ${formatDuration(usage.cpuSystemMs) || '0ms'})${average}`;
}

/** `GPU 0 20.1G peak, GPU 1 3.2G peak`. */
function gpuText(peaks: Record<string, number>): string {
  return Object.entries(peaks)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([device, bytes]) => `GPU ${device} ${formatBytes(bytes)} peak`)
    .join(', ');
}

/** How it was measured, and whether it is all of it yet. */
function measuredText(run: RunRecord, usage: RunUsage): string {
  const how = usage.source === 'cgroup' ? 'by its cgroup' : `from /proc every ${USAGE_SAMPLE_MS / 1000}s (what ends between two readings is missed)`;
  return run.status === 'running' ? `${how}, so far (${formatDuration(usage.wallMs)} of wall time)` : how;
}

/** The rows of what the run used, as [label, value]; none when its worker measured nothing. */
export function usageRows(run: RunRecord): [string, string][] {
  const { usage } = run;
  if (!usage) return [];
  if (usage.samples === 0) {
    const when = run.status === 'running' ? 'not read yet' : `not read: it ended before the first reading (every ${USAGE_SAMPLE_MS / 1000}s)`;
    return [['cpu time', when], ['memory', when]];
  }
  const rows: [string, string][] = [
    ['cpu time', withBooked(cpuText(usage), run, 'cpu', usage.cpuLimit !== undefined)],
    [
      'memory',
      withBooked(
        `${formatBytes(usage.peakMemoryBytes)} peak${usage.oomKills ? `, ${usage.oomKills} process${usage.oomKills > 1 ? 'es' : ''} killed out of memory` : ''}`,
        run,
        'mem',
        usage.memoryLimitBytes !== undefined,
      ),
    ],
  ];
  if (usage.gpuPeakBytes) rows.push(['gpu memory', withBooked(gpuText(usage.gpuPeakBytes), run, 'gpumem', false)]);
  rows.push(['measured', measuredText(run, usage)]);
  return rows;
}

/** One attempt's usage on one line: `cpu 12.4s, 11.2G peak`; undefined when none was read (it ended before the first reading). */
export function usageSummary(usage: RunUsage): string | undefined {
  if (usage.samples === 0) return undefined;
  const gpu = usage.gpuPeakBytes ? `, ${gpuText(usage.gpuPeakBytes)}` : '';
  return `cpu ${formatDuration(usage.cpuUserMs + usage.cpuSystemMs) || '0ms'}, ${formatBytes(usage.peakMemoryBytes)} peak${gpu}`;
}
