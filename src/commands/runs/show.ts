import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { formatDuration, formatTime } from '../../cli/format.js';
import { describeDemands, formatCommand, formatLabels } from '../../cli/run-table.js';
import { oneLine } from '../../queue/names.js';

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
      ['exit code', run.exitCode?.toString()],
      ['signal', run.signal],
      ['reason', run.reason],
      ['retries', run.retries === undefined ? undefined : `${run.restaged ?? 0} of ${run.retries} used`],
      ['re-staged', run.restagedReason],
    ];
    // Each value on its line, its control characters escaped.
    for (const [label, value] of rows) if (value !== undefined && value !== '') this.log(`${`${label}:`.padEnd(11)}${oneLine(value)}`);
  }
}

