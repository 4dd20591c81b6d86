import { Args, Flags } from '@oclif/core';
import { FitqCommand, inBatches, parseKeyValues } from '../../cli/base-command.js';
import { UsageError } from '../../errors.js';
import { RUN_STATUSES, type RunStatus } from '../../queue/run-record.js';

export default class RunsRm extends FitqCommand {
  static override summary = 'Remove runs and their output.';
  static override description =
    'Runs are named by id (or a unique prefix of one), or selected with --status and --label (all must match). ' +
    'A running run is refused unless --force, which cancels it and waits for it to end first.';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> runs rm 3f2a9c81d0e4 77b0',
    '<%= config.bin %> runs rm --status completed --status failed',
    '<%= config.bin %> runs rm --status completed --label sweep=lr',
    '<%= config.bin %> runs rm --force 3f2a9c81d0e4',
  ];
  static override args = { ids: Args.string({ description: 'Run ids, or unique prefixes of them.' }) };
  static override flags = {
    status: Flags.string({ multiple: true, multipleNonGreedy: true, delimiter: ',', options: [...RUN_STATUSES], summary: 'Remove every run with this status (repeatable, or comma-separated: failed,lost).' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Remove every run with this KEY=VALUE label (repeatable: all must match).' }),
    force: Flags.boolean({ summary: 'Cancel running runs first.' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(RunsRm);
    const ids = argv as string[];
    const labels = parseKeyValues('--label', flags.label);
    const selecting = flags.status !== undefined || flags.label !== undefined;
    if (ids.length === 0 && !selecting) throw new UsageError('name the runs to remove, or select them with --status or --label');
    const removed = await this.withClient(flags, async (client) => {
      const all = await client.selectRunIds(ids, selecting ? { statuses: flags.status as RunStatus[] | undefined, labels } : undefined);
      return all.length === 0 ? 0 : client.removeRuns(all, { force: flags.force });
    });
    this.log(`Removed ${removed} run${removed === 1 ? '' : 's'}.`);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: select the runs with --status and --label, or name them ${inBatches('runs rm')}`;
  }
}
