/**
 * A preemptible run's terms (`fitq stage --preemptible`, `--preempt-signal`,
 * `--preempt-after`): checked and stored at stage, read back by its worker
 * when a claim preempts it, and said in `fitq runs`. The claim decides whom
 * to preempt (lua/includes/preemption/); this module only holds the terms.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { formatDurationSpec, formatTimeSignal, parseDuration, parseTimeSignal, type TimeSignal } from '../units/duration.js';
import type { RunRecord } from './run-record.js';

/** The longest grace a preempted run gets between its signal and its stop: what a held run may wait for. */
export const MAX_PREEMPT_GRACE_MS = 2 * 3_600_000;

/** The longest `--preempt-after` (as a time limit). */
const MAX_PREEMPT_AFTER_MS = 365 * 86_400_000;

/** A preemptible run without `--preempt-signal` is stopped at once: SIGTERM, SIGKILL after its worker's grace. */
export const DEFAULT_PREEMPT_SIGNAL: TimeSignal = { signal: 'SIGTERM', beforeMs: 0 };

/** What the stage request says of preemption; any of them makes the run preemptible. */
export interface PreemptRequest {
  preemptible?: boolean | undefined;
  /** `SIGUSR1@60s`: the signal, and how long before it is stopped. */
  preemptSignal?: string | TimeSignal | undefined;
  /** ms, or as typed (`10m`): it is never preempted before it ran this long. */
  preemptAfter?: number | string | undefined;
}

/** The run's stored preemption fields (run-fields.ts `preempt`, `preemptAfter`), checked; {} for a run that is not preemptible. */
export function preemptFields(request: PreemptRequest): { preempt?: string; preemptAfter?: string } {
  const { preemptible, preemptSignal, preemptAfter } = request;
  if (preemptible !== undefined && typeof preemptible !== 'boolean') {
    throw new UsageError(`expected preemptible to be true or false, got ${quote(String(preemptible))}`);
  }
  if (preemptible === false && (preemptSignal !== undefined || preemptAfter !== undefined)) {
    throw new UsageError('--preempt-signal and --preempt-after are for a preemptible run: drop preemptible false');
  }
  if (!preemptible && preemptSignal === undefined && preemptAfter === undefined) return {};
  const signal = preemptSignal === undefined ? DEFAULT_PREEMPT_SIGNAL : checkSignal(preemptSignal);
  if (signal.beforeMs > MAX_PREEMPT_GRACE_MS) {
    throw new UsageError(`--preempt-signal ${quote(formatTimeSignal(signal))} gives a grace above ${formatDurationSpec(MAX_PREEMPT_GRACE_MS)}: the run it makes room for waits that long`);
  }
  const after = preemptAfter === undefined ? undefined : checkAfter(preemptAfter);
  return { preempt: formatTimeSignal(signal), ...(after ? { preemptAfter: String(after) } : {}) };
}

function checkSignal(value: string | TimeSignal): TimeSignal {
  if (typeof value === 'string') return parseTimeSignal('--preempt-signal', value, 'it is stopped');
  if (typeof value !== 'object' || value === null) throw new UsageError(`expected --preempt-signal to be SIGNAL[@TIME], got ${quote(String(value))}`);
  // Checked as if typed, so the API and the CLI accept the same.
  const before = Number(value.beforeMs);
  return parseTimeSignal('--preempt-signal', before === 0 ? String(value.signal) : `${String(value.signal)}@${before}ms`, 'it is stopped');
}

function checkAfter(value: number | string): number {
  const ms = typeof value === 'string' ? parseDuration('--preempt-after', value) : value;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_PREEMPT_AFTER_MS) {
    throw new UsageError(`expected --preempt-after to be a duration up to 365d, got ${quote(String(value))}`);
  }
  return ms;
}

/**
 * How a preempted run is stopped: its signal and grace as staged; a run
 * staged without them (not preemptible, preempted by fair share: `fitq
 * share set --preempt`) is stopped at once.
 */
export function preemptTerms(run: Pick<RunRecord, 'preempt'>): TimeSignal {
  if (run.preempt === undefined) return DEFAULT_PREEMPT_SIGNAL;
  try {
    return parseTimeSignal('preempt', run.preempt);
  } catch {
    // Not as fitq writes it (a hand in Redis): stopped at once.
    return DEFAULT_PREEMPT_SIGNAL;
  }
}

/** "SIGUSR1, grace 1m", "stopped at once": how a preempted run is stopped. */
function graceText(terms: TimeSignal): string {
  return terms.beforeMs === 0 ? `${terms.signal}, stopped at once` : `${terms.signal}, grace ${formatDurationSpec(terms.beforeMs)}`;
}

/** "SIGUSR1, grace 1m, after 10m": a preemptible run's terms, in words. */
export function preemptibleText(run: Pick<RunRecord, 'preempt' | 'preemptAfter'>): string {
  return `${graceText(preemptTerms(run))}${run.preemptAfter ? `, not before it ran ${formatDurationSpec(run.preemptAfter)}` : ''}`;
}

/** "preempting r17 for r42 (SIGUSR1, grace 1m)": a running run being preempted, in words; undefined for others. */
export function preemptingText(run: Pick<RunRecord, 'id' | 'status' | 'preempt' | 'preempting'>): string | undefined {
  if (run.status !== 'running' || run.preempting === undefined) return undefined;
  return `preempting ${run.id} for ${run.preempting.for} (${graceText(preemptTerms(run))})`;
}
