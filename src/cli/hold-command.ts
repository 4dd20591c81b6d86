/** What `fitq hold` and `fitq release` share: selecting the runs (run-selection.ts) and saying what happened to each. */
import { Flags } from '@oclif/core';
import { EXIT } from '../exit-codes.js';
import type { HoldResult } from '../operations/hold.js';
import { FitqCommand } from './base-command.js';
import { parseRunSelection, reportSelection, selectInstead, selectionArgs, selectionFlags, selectRuns } from './run-selection.js';

export abstract class HoldCommand extends FitqCommand {
  static override strict = false;
  static override args = selectionArgs;
  static override flags = {
    ...selectionFlags,
    json: Flags.boolean({ summary: 'Print what happened to each run as a JSON array (with --dry-run: the runs it would act on).' }),
  };

  protected abstract readonly mode: 'hold' | 'release';

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(this.constructor as typeof HoldCommand);
    // --label or --array alone: the staged runs to hold, or the held runs to release.
    const selection = parseRunSelection(argv as string[], flags, { verb: this.mode, statuses: [this.mode === 'hold' ? 'staged' : 'held'] });
    const results: HoldResult[] | undefined = await this.withClient(flags, async (client) => {
      const runs = await selectRuns(client, selection);
      if (reportSelection(this, selection, runs, flags)) return undefined;
      const ids = runs.map((run) => run.id);
      return this.mode === 'hold' ? client.holdRuns(ids) : client.releaseRuns(ids);
    });
    if (!results) return;
    if (flags.json) this.log(JSON.stringify(results, null, 2));
    else for (const result of results) this.log(result.message);
    // A run refused is an error the caller can test for: another user's signed run, a mistake; one not staged, not done.
    if (results.some((result) => result.outcome === 'notYours')) this.exit(EXIT.usage);
    if (results.some((result) => result.outcome === 'refused')) this.exit(EXIT.failed);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead(this.mode)}`;
  }
}
