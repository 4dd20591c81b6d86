import { Args, Flags } from '@oclif/core';
import { FitqCommand, inBatches, parseKeyValues } from '../cli/base-command.js';
import { UsageError } from '../errors.js';
import { ENDED_STATUSES, type RunStatus } from '../queue/run-record.js';

export default class Restart extends FitqCommand {
  static override summary = 'Stage ended runs again: same id, command, demands and labels, a fresh attempt.';
  static override description =
    'A restarted run goes back to its original place in the order (its priority and staging sequence are kept), ' +
    'and the attempt that ended is kept in its history (fitq runs show). Runs that depend on it wait for it again; ' +
    'with --cascade, those that were canceled because of it are restarted too. ' +
    'Runs are named by id (or a unique prefix of one), or selected with --status and --label (all must match). ' +
    'A run that has not ended is refused with its status (exit 1).';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> restart 3f2a9c81d0e4',
    '<%= config.bin %> restart --status failed,lost,timeout --label sweep=lr',
    '<%= config.bin %> restart 3f2a --cascade',
  ];
  static override args = { ids: Args.string({ description: 'Run ids, or unique prefixes of them.' }) };
  static override flags = {
    status: Flags.string({
      multiple: true, multipleNonGreedy: true, delimiter: ',', options: [...new Set<string>([...ENDED_STATUSES, 'timeout'])],
      summary: 'Restart the runs that ended with this status (repeatable, or comma-separated: failed,lost,timeout).',
    }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Restart the ended runs with this KEY=VALUE label (repeatable: all must match).' }),
    cascade: Flags.boolean({ summary: 'Also restart the runs that were canceled because a restarted run had failed (their dependency), and theirs.' }),
    json: Flags.boolean({ summary: 'Print what happened to each run as a JSON array.' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Restart);
    const ids = argv as string[];
    const labels = parseKeyValues('--label', flags.label);
    const selecting = flags.status !== undefined || flags.label !== undefined;
    if (ids.length === 0 && !selecting) throw new UsageError('name the runs to restart, or select them with --status or --label');
    const statuses = (flags.status ?? [...new Set<string>([...ENDED_STATUSES, 'timeout'])]) as RunStatus[];
    const results = await this.withClient(flags, async (client) => {
      const selected = await client.selectRunIds(ids, selecting ? { statuses, labels } : undefined);
      return client.restartRuns(selected, { cascade: flags.cascade });
    });
    if (flags.json) this.log(JSON.stringify(results, null, 2));
    else if (results.length === 0) this.log('No runs to restart.');
    else for (const result of results) this.log(result.message);
    if (results.some((result) => result.outcome === 'refused')) process.exitCode = 1;
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: select the runs with --status and --label, or name them ${inBatches('restart')}`;
  }
}
