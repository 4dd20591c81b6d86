import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { UsageError } from '../../errors.js';
import { RUN_STATUSES, type RunStatus } from '../../queue/run-record.js';

export default class RunsRm extends FitqCommand {
  static override summary = 'Remove runs and their output.';
  static override description = 'A running run is refused unless --force, which cancels it and waits for it to end first.';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> runs rm 3f2a9c81d0e4 77b0e1c2aa90',
    '<%= config.bin %> runs rm --status completed --status failed',
    '<%= config.bin %> runs rm --force 3f2a9c81d0e4',
  ];
  static override args = { ids: Args.string({ description: 'Run ids.' }) };
  static override flags = {
    status: Flags.string({ multiple: true, options: [...RUN_STATUSES], summary: 'Remove every run with this status (repeatable).' }),
    force: Flags.boolean({ summary: 'Cancel running runs first.' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(RunsRm);
    const ids = argv as string[];
    if (ids.length === 0 && !flags.status) throw new UsageError('name the runs to remove, or use --status');
    const removed = await this.withClient(flags, async (client) => {
      const selected = flags.status ? (await client.listRuns({ statuses: flags.status as RunStatus[] })).map((run) => run.id) : [];
      const all = [...new Set([...ids, ...selected])];
      return all.length === 0 ? 0 : client.removeRuns(all, { force: flags.force });
    });
    this.log(`Removed ${removed} run${removed === 1 ? '' : 's'}.`);
  }
}
