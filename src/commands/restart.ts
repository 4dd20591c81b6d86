import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { parseRunSelection, reportSelection, selectInstead, selectionArgs, selectionFlags, selectRuns } from '../cli/run-selection.js';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { quote } from '../text/quote.js';
import { ENDED_STATUSES, isEnded } from '../model/run-record.js';
import { RESTART_CHUNK } from '../operations/chunks.js';

export default class Restart extends FitqCommand {
  static override summary = 'Stage ended runs again: same id, command, demands and labels, a fresh attempt.';
  static override description =
    'A restarted run goes back to its original place in the order (its priority and staging sequence are kept), ' +
    'and the attempt that ended is kept in its history (fitq runs show). Runs that depend on it wait for it again; ' +
    'with --cascade, those that were canceled because of it are restarted too. ' +
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (all must match; --label or --array alone selects ended runs); --dry-run lists them. ' +
    `Every run is checked first: one that has not ended is refused with its status (exit ${EXIT.usage}) and nothing is restarted; ` +
    `one restarted by someone else between the check and the restart is reported (exit ${EXIT.failed}), the others are restarted. ` +
    `Many runs are restarted ${RESTART_CHUNK} per script call, each part whole, so Redis is never held long: a read meanwhile may show the first parts staged and the rest not yet.`;
  static override strict = false;
  static override examples = [
    '<%= config.bin %> restart 3f2a9c81d0e4',
    '<%= config.bin %> restart --status failed,lost,timeout --label sweep=lr',
    '<%= config.bin %> restart 3f2a --cascade',
  ];
  static override args = selectionArgs;
  static override flags = {
    ...selectionFlags,
    cascade: Flags.boolean({ summary: 'Also restart the runs that were canceled because a restarted run had failed (their dependency), and theirs.' }),
    json: Flags.boolean({ summary: 'Print what happened to each run as a JSON array (with --dry-run: the runs it would restart).' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Restart);
    // --label or --array alone: the runs that ended.
    const selection = parseRunSelection(argv as string[], flags, { verb: 'restart', statuses: ENDED_STATUSES });
    const results = await this.withClient(flags, async (client) => {
      const runs = await selectRuns(client, selection);
      const open = runs.find((run) => !isEnded(run));
      if (open) throw new UsageError(`run ${quote(open.id)} is ${open.status}: only an ended run can be restarted`);
      if (reportSelection(this, selection, runs, flags)) return undefined;
      return client.restartRuns(runs.map((run) => run.id), { cascade: flags.cascade });
    });
    if (!results) return;
    if (flags.json) this.log(JSON.stringify(results, null, 2));
    else for (const result of results) this.log(result.message);
    // Refused here: it was restarted (or otherwise changed) between the check and the restart.
    if (results.some((result) => result.outcome === 'notYours')) this.exit(EXIT.usage);
    if (results.some((result) => result.outcome === 'refused')) this.exit(EXIT.failed);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead('restart')}`;
  }
}
