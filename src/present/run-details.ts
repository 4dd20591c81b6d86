/**
 * One run in full, as `fitq runs show` prints it and the dashboard's run
 * page shows it: the record's fields by label, and every attempt.
 * A run's environment is shown by names only, never values.
 */
import { formatDuration, formatTime } from '../units/time.js';
import { describeDemands, formatCommand, formatLabels, statusText } from './run-table.js';
import { formatDurationSpec, formatTimeLimit } from '../units/duration.js';
import { oneLine } from '../text/quote.js';
import type { RetryPolicy } from '../model/parked.js';
import { everyAttempt, type RunAttempt, type RunRecord } from '../model/run-record.js';
import { usageRows, usageSummary } from './run-usage.js';
import { formatStager } from '../model/stager.js';
import { preemptibleText, preemptingText } from '../model/preemption.js';

/** "2h30m (SIGUSR1@2m), deadline 14:30:00 (in 1h)": the limit, its signal if not the default, and while running its deadline. */
function timeLimitText(run: RunRecord, now: number): string | undefined {
  if (run.timeLimit === undefined) return undefined;
  const signal = run.timeSignal ? ` (${run.timeSignal})` : '';
  const deadline = run.deadline === undefined ? '' : `, deadline ${formatTime(run.deadline, now)}`;
  return `${formatTimeLimit(run.timeLimit)}${signal}${deadline}`;
}

/** The run's fields that hold something, as [label, value] (values as typed: not yet on one line). */
export function runDetailRows(run: RunRecord, now = Date.now()): [string, string][] {
  const rows: [string, string | undefined][] = [
    ['id', run.id],
    ['status', statusText(run)],
    ['command', formatCommand(run)],
    ['requires', describeDemands(run)],
    ['priority', String(run.priority)],
    ['staged by', formatStager(run.user, run.stagedFrom) || undefined],
    ['labels', formatLabels(run.labels) || undefined],
    ['env', Object.keys(run.env).join(' ') || undefined],
    ['cwd', run.cwd],
    ['array', run.array === undefined ? undefined : `${run.array} index ${run.arrayIndex ?? '?'}`],
    ['params', run.params === undefined ? undefined : formatLabels(run.params)],
    ['output', run.output && `${run.output.stdout} (${run.output.stderr === undefined ? 'stdout and stderr' : 'stdout'}${run.output.append ? ', appended' : ''})`],
    ['error', run.output?.stderr && `${run.output.stderr} (stderr${run.output.append ? ', appended' : ''})`],
    ['worker', run.worker],
    ['devices', run.devices?.join(',')],
    ['pinned to', run.pinnedGpus && `gpus ${run.pinnedGpus.join(',')}`],
    ['staged', formatTime(run.stagedAt, now)],
    ['started', formatTime(run.startedAt, now) || undefined],
    ['ended', formatTime(run.endedAt, now) || undefined],
    ['duration', run.startedAt === undefined ? undefined : formatDuration((run.endedAt ?? now) - run.startedAt)],
    ['limit', timeLimitText(run, now)],
    ...usageRows(run),
    ['exit code', run.exitCode?.toString()],
    ['signal', run.signal],
    ['reason', preemptingText(run) ?? run.reason],
    ['preemptible', run.preempt && preemptibleText(run)],
    ['preempted', run.preempted ? `${run.preempted} time${run.preempted === 1 ? '' : 's'}` : undefined],
    ['retries', run.retries === undefined ? undefined : `${run.restaged ?? 0} of ${run.retries} used`],
    ['re-staged', run.restagedReason],
    ['begins', formatTime(run.beginAt, now) || undefined],
    ['after', run.after?.map((group) => `${group.kind === 'any' ? 'any of ' : ''}${[...group.ids, ...(group.arrays ?? []).map((array) => `array ${array}`)].join(',')} (after-${group.kind})`).join('; ')],
    ['dependents', run.dependents?.join(',')],
    ['retry', run.retryOnFailure && describeRetry(run.retryOnFailure, run.failures ?? 0)],
    ['restarted', run.restarted?.toString()],
    ['last request', run.lastRequest && lastRequestText(run.lastRequest, now)],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== undefined && row[1] !== '');
}

/** `cancel by carol, 2m ago`; a refused one says why: `cancel by alice, 5s ago (refused by its worker: …)`. */
function lastRequestText({ op, by, at, refused }: NonNullable<RunRecord['lastRequest']>, now: number): string {
  return `${op} by ${by}, ${formatTime(at, now)}${refused ? ` (refused by its worker: ${refused})` : ''}`;
}

function describeRetry(retry: RetryPolicy, failures: number): string {
  const on = retry.exitCodes ? ` on exit codes ${retry.exitCodes.join(',')}` : '';
  const backoff = retry.backoffMs ? `, backoff ${formatDurationSpec(retry.backoffMs)}${retry.exponential ? ' doubling' : ''}` : '';
  return `on failure${retry.onTimeout ? ' or timeout' : ''}${on}: ${failures} of ${retry.max} used${backoff}`;
}

/** `#1 failed (exit code 1) on w1, started …, ran 3s`. */
export function describeAttempt(attempt: RunAttempt, now = Date.now()): string {
  const parts = [`#${attempt.attempt} ${attempt.status}`];
  if (attempt.reason) parts[0] += ` (${attempt.reason})`;
  if (attempt.worker) parts.push(`on ${attempt.worker}`);
  if (attempt.startedAt !== undefined) parts.push(`started ${formatTime(attempt.startedAt, now)}`);
  if (attempt.startedAt !== undefined && attempt.endedAt !== undefined) parts.push(`ran ${formatDuration(attempt.endedAt - attempt.startedAt)}`);
  else if (attempt.endedAt !== undefined) parts.push(`ended ${formatTime(attempt.endedAt, now)}`);
  const used = attempt.usage && usageSummary(attempt.usage);
  if (used) parts.push(used);
  return parts.join(', ');
}

/** Where `fitq runs show`'s values start, unless a label is longer. */
const VALUE_COLUMN = 11;

/**
 * `fitq runs show`'s lines: each field's label, then its value on one line
 * (control characters escaped), every value in the same column, a space at
 * least after the longest label; then every attempt.
 */
export function runDetailLines(run: RunRecord, now = Date.now()): string[] {
  const rows = runDetailRows(run, now);
  // The same column for every run (`resources: ` is the usual longest), further right only for a longer label.
  const width = Math.max(VALUE_COLUMN, ...rows.map(([label]) => label.length + 2));
  const lines = rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${oneLine(value)}`);
  const attempts = everyAttempt(run);
  if (attempts.length > 0) lines.push('attempts:', ...attempts.map((attempt) => `  ${oneLine(describeAttempt(attempt, now))}`));
  return lines;
}
