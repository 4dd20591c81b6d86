import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { parseDuration } from '../units/duration.js';
import { describeEnd } from '../present/run-end.js';
import { EXIT } from '../exit-codes.js';
import { firstFailure, RUN_EXIT_RULE, waitExitCode } from '../model/run-exit-code.js';
import { parseRunSelection, reportNothingMatched, selectInstead, selectionArgs, selectionFlags, selectRuns } from '../cli/run-selection.js';
import { oneLine } from '../text/quote.js';
import type { RunRecord } from '../model/run-record.js';
import { WaitIncompleteError } from '../operations/wait.js';

export default class Wait extends FitqCommand {
  static override summary = 'Wait until runs end, and exit with their exit code.';
  static override description =
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (all given must match). ' +
    `Exit code: one run, its own: ${RUN_EXIT_RULE}. Several runs: 0 if all completed, else the code of the first, ` +
    `in the order given (selected runs: staging order), that did not. An unknown run is refused (exit ${EXIT.usage}), a selection that matches nothing ` +
    `exits ${EXIT.nothingMatched} (as for every command); --timeout gives up with exit ${EXIT.gaveUp}; interrupted (Ctrl-C, SIGTERM) ${EXIT.interrupted}, the runs go on. ` +
    "A run whose worker dies ends lost once the worker's lease runs out; Redis restarts are waited through.";
  static override strict = false;
  static override examples = [
    '<%= config.bin %> wait 3f2a9c81d0e4',
    '<%= config.bin %> wait 3f2a 77b0 --timeout 2h',
    '<%= config.bin %> wait --label sweep=lr --json',
    'id=$(<%= config.bin %> stage -r gpu=1 -- python train.py) && <%= config.bin %> wait "$id" && echo trained',
  ];
  static override args = selectionArgs;
  static override flags = {
    status: selectionFlags.status,
    label: selectionFlags.label,
    array: selectionFlags.array,
    user: selectionFlags.user,
    mine: selectionFlags.mine,
    timeout: Flags.string({ summary: `Give up after this long (30s, 10m, 2h30m): exit ${EXIT.gaveUp}, naming the runs that had not ended.` }),
    quiet: Flags.boolean({ char: 'q', summary: 'Say nothing of runs that completed (runs that did not are still named on stderr, with why).' }),
    json: Flags.boolean({ summary: 'Print the runs as a JSON array once waiting is over (given up: as they are then).' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Wait);
    const ids = argv as string[];
    const timeoutMs = flags.timeout === undefined ? undefined : parseDuration('--timeout', flags.timeout);
    const selection = parseRunSelection(ids, flags, { verb: 'wait for' });
    const say = (run: RunRecord) => {
      if (!flags.quiet || run.status !== 'completed') process.stderr.write(`${oneLine(describeEnd(run))}\n`);
    };
    const abort = new AbortController();
    const onSignal = () => abort.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let runs: RunRecord[] | undefined;
    try {
      runs = await this.withClient(flags, async (client) => {
        const selected = await selectRuns(client, selection);
        if (selected.length === 0) {
          reportNothingMatched(this, selection, flags);
          return undefined;
        }
        return client.waitForRuns(selected.map((run) => run.id), { timeoutMs, signal: abort.signal, onEnd: say });
      });
    } catch (error) {
      if (!(error instanceof WaitIncompleteError)) throw error;
      if (flags.json) this.log(JSON.stringify(error.runs, null, 2));
      process.stderr.write(`Error: ${oneLine(error.message)}\n`);
      return this.exit(error.why === 'timeout' ? EXIT.gaveUp : EXIT.interrupted);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (!runs) return;
    if (flags.json) this.log(JSON.stringify(runs, null, 2));
    // With --quiet the deciding failure was named as it ended; many runs: say which one decided.
    const failure = firstFailure(runs);
    if (failure && runs.length > 1) process.stderr.write(`${runs.filter((run) => run.status !== 'completed').length} of ${runs.length} runs did not complete; the first: ${oneLine(describeEnd(failure))}\n`);
    const code = waitExitCode(runs);
    if (code !== EXIT.ok) this.exit(code);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead('wait')}`;
  }
}
