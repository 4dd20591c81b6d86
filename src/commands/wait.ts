import { Args, Flags } from '@oclif/core';
import { FitqCommand, inBatches, parseKeyValues } from '../cli/base-command.js';
import { parseDuration } from '../cli/duration.js';
import { describeEnd } from '../cli/run-end.js';
import { firstFailure, WAIT_TIMEOUT_EXIT, waitExitCode } from '../cli/wait-exit.js';
import { UsageError } from '../errors.js';
import { oneLine, quote } from '../queue/names.js';
import { RUN_STATUSES, type RunFilter, type RunRecord, type RunStatus } from '../queue/run-record.js';
import { WaitIncompleteError } from '../queue/wait.js';

export default class Wait extends FitqCommand {
  static override summary = 'Wait until runs end, and exit with their exit code.';
  static override description =
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (all given must match). ' +
    "Exit code: one run, its own: 0 completed; failed: its exit code, or 128 + the signal's number; timeout 124; " +
    'canceled, lost, rejected 1 (the reason on stderr). Several runs: 0 if all completed, else the code of the first, ' +
    `in the order given (selected runs: staging order), that did not. An unknown run is refused (exit 2); --timeout gives up with exit ${WAIT_TIMEOUT_EXIT}. ` +
    "A run whose worker dies ends lost once the worker's lease runs out; Redis restarts are waited through.";
  static override strict = false;
  static override examples = [
    '<%= config.bin %> wait 3f2a9c81d0e4',
    '<%= config.bin %> wait 3f2a 77b0 --timeout 2h',
    '<%= config.bin %> wait --label sweep=lr --json',
    'id=$(<%= config.bin %> stage -r gpu=1 -- python train.py) && <%= config.bin %> wait "$id" && echo trained',
  ];
  static override args = { ids: Args.string({ description: 'Run ids, or unique prefixes of them.' }) };
  static override flags = {
    status: Flags.string({ multiple: true, multipleNonGreedy: true, delimiter: ',', options: [...RUN_STATUSES], summary: 'Wait for the runs with this status (repeatable, or comma-separated: staged,running).' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Wait for the runs with this KEY=VALUE label (repeatable: all must match).' }),
    array: Flags.string({ summary: 'Wait for the runs of this array (fitq stage --array): those labelled array=ID.' }),
    timeout: Flags.string({ summary: `Give up after this long (30s, 10m, 2h30m): exit ${WAIT_TIMEOUT_EXIT}, naming the runs that had not ended.` }),
    quiet: Flags.boolean({ char: 'q', summary: 'Say nothing of runs that completed (runs that did not are still named on stderr, with why).' }),
    json: Flags.boolean({ summary: 'Print the runs as a JSON array once waiting is over (given up: as they are then).' }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Wait);
    const ids = argv as string[];
    const timeoutMs = flags.timeout === undefined ? undefined : parseDuration('--timeout', flags.timeout);
    const labels = parseKeyValues('--label', flags.label);
    if (flags.array !== undefined) {
      if (Object.hasOwn(labels, 'array') && labels.array !== flags.array) {
        throw new UsageError(`--array ${quote(flags.array)} and --label array=${quote(labels.array!)} select no run together`);
      }
      labels.array = flags.array;
    }
    const selecting = flags.status !== undefined || flags.label !== undefined || flags.array !== undefined;
    if (ids.length === 0 && !selecting) throw new UsageError('name the runs to wait for, or select them with --status, --label or --array');
    const filter: RunFilter | undefined = selecting ? { statuses: (flags.status ?? []) as RunStatus[], labels } : undefined;
    const say = (run: RunRecord) => {
      if (!flags.quiet || run.status !== 'completed') process.stderr.write(`${oneLine(describeEnd(run))}\n`);
    };
    const abort = new AbortController();
    const onSignal = () => abort.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let runs: RunRecord[];
    try {
      runs = await this.withClient(flags, async (client) => {
        const selected = await client.selectRunIds(ids, filter);
        if (selected.length === 0) throw new UsageError(`no run matches ${describeFilter(flags)}`);
        return client.waitForRuns(selected, { timeoutMs, signal: abort.signal, onEnd: say });
      });
    } catch (error) {
      if (!(error instanceof WaitIncompleteError)) throw error;
      if (flags.json) this.log(JSON.stringify(error.runs, null, 2));
      process.stderr.write(`Error: ${oneLine(error.message)}\n`);
      return this.exit(error.why === 'timeout' ? WAIT_TIMEOUT_EXIT : 130);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (flags.json) this.log(JSON.stringify(runs, null, 2));
    // With --quiet the deciding failure was named as it ended; many runs: say which one decided.
    const failure = firstFailure(runs);
    if (failure && runs.length > 1) process.stderr.write(`${runs.filter((run) => run.status !== 'completed').length} of ${runs.length} runs did not complete; the first: ${oneLine(describeEnd(failure))}\n`);
    const code = waitExitCode(runs);
    if (code !== 0) this.exit(code);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: select the runs with --label or --array, or name them ${inBatches('wait')}`;
  }
}

/** The selection as typed, for "no run matches". */
function describeFilter(flags: { status?: string[] | undefined; label?: string[] | undefined; array?: string | undefined }): string {
  const parts = [
    ...(flags.status ?? []).map((status) => `--status ${status}`),
    ...(flags.label ?? []).map((label) => `--label ${quote(label)}`),
    ...(flags.array === undefined ? [] : [`--array ${quote(flags.array)}`]),
  ];
  return parts.join(' ');
}
