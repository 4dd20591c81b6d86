import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { parseRunSelection, reportSelection, selectInstead, selectionArgs, selectionFlags, selectRuns } from '../../cli/run-selection.js';
import { REMOVE_CHUNK } from '../../operations/chunks.js';

export default class RunsRm extends FitqCommand {
  static override summary = 'Remove runs and their output.';
  static override description =
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (all must match). ' +
    'A running run is refused unless --force, which cancels it and waits for it to end first. --dry-run lists what would be removed. ' +
    `All or nothing up to ${REMOVE_CHUNK} runs; more go ${REMOVE_CHUNK} per script call, so Redis is never held long: a part refused (a run started meanwhile) leaves the earlier parts removed, and the error says how many.`;
  static override strict = false;
  static override examples = [
    '<%= config.bin %> runs rm 3f2a9c81d0e4 77b0',
    '<%= config.bin %> runs rm --status completed --status failed',
    '<%= config.bin %> runs rm --status completed --label sweep=lr',
    '<%= config.bin %> runs rm --array 3f2a --dry-run',
    '<%= config.bin %> runs rm --force 3f2a9c81d0e4',
  ];
  static override args = selectionArgs;
  static override flags = {
    ...selectionFlags,
    force: Flags.boolean({ summary: 'Cancel running runs first.' }),
    json: Flags.boolean({ summary: 'Print the removed run ids as JSON (with --dry-run: the runs it would remove).' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(RunsRm);
    const selection = parseRunSelection(argv as string[], flags, { verb: 'remove' });
    const removed = await this.withClient(flags, async (client) => {
      const runs = await selectRuns(client, selection);
      if (reportSelection(this, selection, runs, flags)) return undefined;
      const ids = runs.map((run) => run.id);
      return { ids, count: await client.removeRuns(ids, { force: flags.force }) };
    });
    if (!removed) return;
    if (flags.json) this.log(JSON.stringify(removed.ids));
    else this.log(`Removed ${removed.count} run${removed.count === 1 ? '' : 's'}.`);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead('runs rm')}`;
  }
}
