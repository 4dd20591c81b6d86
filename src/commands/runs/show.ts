import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { formatDuration, formatTime } from '../../cli/format.js';
import { describeDemands, formatCommand, formatLabels } from '../../cli/run-table.js';
import { formatDurationSpec, formatTimeLimit } from '../../cli/duration.js';
import { oneLine } from '../../queue/names.js';
import type { RetryPolicy } from '../../queue/parked.js';
import type { RunAttempt, RunRecord } from '../../queue/run-record.js';

/** "2h30m (SIGUSR1@2m), deadline 14:30:00 (in 1h)": the limit, its signal if not the default, and while running its deadline. */
function timeLimitText(run: RunRecord, now: number): string | undefined {
  if (run.timeLimit === undefined) return undefined;
  const signal = run.timeSignal ? ` (${run.timeSignal})` : '';
  const deadline = run.deadline === undefined ? '' : `, deadline ${formatTime(run.deadline, now)}`;
  return `${formatTimeLimit(run.timeLimit)}${signal}${deadline}`;
}

export default class RunsShow extends FitqCommand {
  static override summary = 'Show one run in full.';
  static override examples = ['<%= config.bin %> runs show 3f2a9c81d0e4', '<%= config.bin %> runs show 3f2a9c81d0e4 --json'];
  static override args = { id: Args.string({ required: true, description: 'Run id, or a unique prefix of one.' }) };
  static override flags = { json: Flags.boolean({ summary: 'Print the run as JSON.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(RunsShow);
    const run = await this.withClient(flags, async (client) => client.getRun(await client.resolveRunId(args.id)));
    if (flags.json) {
      this.log(JSON.stringify(run, null, 2));
      return;
    }
    const now = Date.now();
    const rows: [string, string | undefined][] = [
      ['id', run.id],
      ['status', run.status],
      ['command', formatCommand(run)],
      ['requires', describeDemands(run)],
      ['priority', String(run.priority)],
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
      ['exit code', run.exitCode?.toString()],
      ['signal', run.signal],
      ['reason', run.reason],
      ['retries', run.retries === undefined ? undefined : `${run.restaged ?? 0} of ${run.retries} used`],
      ['re-staged', run.restagedReason],
      ['begins', run.beginAt === undefined ? undefined : new Date(run.beginAt).toISOString()],
      ['after', run.after?.map((group) => `${group.kind === 'any' ? 'any of ' : ''}${group.ids.join(',')} (after-${group.kind})`).join('; ')],
      ['dependents', run.dependents?.join(',')],
      ['retry', run.retryOnFailure && describeRetry(run.retryOnFailure, run.failures ?? 0)],
      ['restarted', run.restarted?.toString()],
    ];
    // Each value on its line, its control characters escaped.
    for (const [label, value] of rows) if (value !== undefined && value !== '') this.log(`${`${label}:`.padEnd(11)}${oneLine(value)}`);
    if (run.attempts && run.attempts.length > 0) {
      this.log('attempts:');
      for (const attempt of run.attempts) this.log(`  ${oneLine(describeAttempt(attempt, now))}`);
    }
  }
}

function describeRetry(retry: RetryPolicy, failures: number): string {
  const on = retry.exitCodes ? ` on exit codes ${retry.exitCodes.join(',')}` : '';
  const backoff = retry.backoffMs ? `, backoff ${formatDurationSpec(retry.backoffMs)}${retry.exponential ? ' doubling' : ''}` : '';
  return `on failure${retry.onTimeout ? ' or timeout' : ''}${on}: ${failures} of ${retry.max} used${backoff}`;
}

/** `#1 failed (exit code 1) on w1, started …, ran 3s`. */
function describeAttempt(attempt: RunAttempt, now: number): string {
  const parts = [`#${attempt.attempt} ${attempt.status}`];
  if (attempt.reason) parts[0] += ` (${attempt.reason})`;
  if (attempt.worker) parts.push(`on ${attempt.worker}`);
  if (attempt.startedAt !== undefined) parts.push(`started ${formatTime(attempt.startedAt, now)}`);
  if (attempt.startedAt !== undefined && attempt.endedAt !== undefined) parts.push(`ran ${formatDuration(attempt.endedAt - attempt.startedAt)}`);
  else if (attempt.endedAt !== undefined) parts.push(`ended ${formatTime(attempt.endedAt, now)}`);
  return parts.join(', ');
}

