import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { EXIT } from '../exit-codes.js';
import { parseRunSelection, reportSelection, selectInstead, selectionArgs, selectionFlags, selectRuns } from '../cli/run-selection.js';
import { describeCancel } from '../present/result-lines.js';
import { cancelCascade } from '../model/dependencies.js';

export default class Cancel extends FitqCommand {
  static override summary = 'Cancel runs: a staged one at once, a running one by stopping its process group.';
  static override description =
    "A running run gets SIGTERM on its process group, then SIGKILL after the worker's grace period, and ends as canceled. " +
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (all must match; ' +
    '--label or --array without --status selects staged and running runs). Every id is checked first: an unknown one cancels nothing. ' +
    'Runs that depend on a canceled run and can then never start are canceled with it (unless staged with --keep-if-dependency-fails): ' +
    '--dry-run lists what would be canceled, them included. ' +
    'Runs are canceled one script call each, so Redis is never held long: a read meanwhile may show some canceled and the rest not yet.';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> cancel 3f2a9c81d0e4',
    '<%= config.bin %> cancel 3f2a 77b0 --no-wait',
    '<%= config.bin %> cancel --status staged --label sweep=lr',
    '<%= config.bin %> cancel --array 3f2a --dry-run',
    '<%= config.bin %> cancel 3f2a --dry-run',
  ];
  static override args = selectionArgs;
  static override flags = {
    ...selectionFlags,
    wait: Flags.boolean({ summary: 'Wait until running runs have ended.', default: true, allowNo: true }),
    json: Flags.boolean({ summary: 'Print what happened to each run as JSON (with --dry-run: the runs it would cancel).' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Cancel);
    // --label or --array alone: the runs that can still be canceled.
    const selection = parseRunSelection(argv as string[], flags, { verb: 'cancel', statuses: ['staged', 'held', 'running'] });
    const results = await this.withClient(flags, async (client) => {
      const selected = await selectRuns(client, selection);
      // A dry run lists the runs that would be canceled with them too.
      const runs = selection.dryRun ? cancelCascade(await client.listRuns(), selected.map((run) => run.id)) : selected;
      if (reportSelection(this, selection, runs, flags)) {
        const chosen = new Set(selected.map((run) => run.id));
        const cascade = runs.filter((run) => !chosen.has(run.id)).map((run) => run.id);
        if (cascade.length > 0 && !flags.json) this.log(`(${cascade.join(', ')}: their dependencies could then never be met)`);
        return undefined;
      }
      return client.cancelRuns(runs.map((run) => run.id), { wait: flags.wait });
    });
    if (!results) return;
    if (flags.json) this.log(JSON.stringify(results, null, 2));
    else for (const result of results) this.log(describeCancel(result));
    // Another user's signed run: a mistake the caller can test for.
    if (results.some((result) => result.outcome === 'notYours')) this.exit(EXIT.usage);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead('cancel')}`;
  }
}
