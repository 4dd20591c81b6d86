import { Args, Flags } from '@oclif/core';
import { FitqCommand, inBatches, parseKeyValues } from '../cli/base-command.js';
import { UsageError } from '../errors.js';
import type { CancelResult } from '../queue/client.js';
import { cancelCascade } from '../queue/dependencies.js';
import { RUN_STATUSES, type RunStatus } from '../queue/run-record.js';

export default class Cancel extends FitqCommand {
  static override summary = 'Cancel runs: a staged one at once, a running one by stopping its process group.';
  static override description =
    "A running run gets SIGTERM on its process group, then SIGKILL after the worker's grace period, and ends as canceled. " +
    'Runs are named by id (or a unique prefix of one), or selected with --status and --label (all must match; ' +
    '--label alone selects staged and running runs). Every id is checked first: an unknown one cancels nothing. ' +
    'Runs that depend on a canceled run and can then never start are canceled with it (unless staged with --keep-if-dependency-fails): --dry-run lists them.';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> cancel 3f2a9c81d0e4',
    '<%= config.bin %> cancel 3f2a 77b0 --no-wait',
    '<%= config.bin %> cancel --status staged --label sweep=lr',
    '<%= config.bin %> cancel 3f2a --dry-run',
  ];
  static override args = { ids: Args.string({ description: 'Run ids, or unique prefixes of them.' }) };
  static override flags = {
    status: Flags.string({ multiple: true, multipleNonGreedy: true, delimiter: ',', options: [...RUN_STATUSES], summary: 'Cancel the runs with this status (repeatable, or comma-separated: staged,running).' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Cancel the runs with this KEY=VALUE label (repeatable: all must match).' }),
    wait: Flags.boolean({ summary: 'Wait until running runs have ended.', default: true, allowNo: true }),
    'dry-run': Flags.boolean({
      summary: 'List what would be canceled, the runs that depend on them and could then never start included, without canceling anything.',
    }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Cancel);
    const ids = argv as string[];
    const labels = parseKeyValues('--label', flags.label);
    const selecting = flags.status !== undefined || flags.label !== undefined;
    if (ids.length === 0 && !selecting) throw new UsageError('name the runs to cancel, or select them with --status or --label');
    // --label alone: the runs that can still be canceled.
    const statuses = (flags.status ?? ['staged', 'held', 'running']) as RunStatus[];
    if (flags['dry-run']) {
      const doomed = await this.withClient(flags, async (client) => {
        const selected = await client.selectRunIds(ids, selecting ? { statuses, labels } : undefined);
        return cancelCascade(await client.listRuns(), selected);
      });
      if (doomed.length === 0) this.log('No runs would be canceled.');
      const named = new Set(ids);
      for (const run of doomed) {
        const why = run.after && !named.has(run.id) ? ': its dependencies could then never be met' : '';
        this.log(`Would cancel run ${run.id} (${run.status})${why}`);
      }
      return;
    }
    const results = await this.withClient(flags, async (client) => {
      const selected = await client.selectRunIds(ids, selecting ? { statuses, labels } : undefined);
      return client.cancelRuns(selected, { wait: flags.wait });
    });
    if (results.length === 0) this.log('No runs to cancel.');
    for (const result of results) this.log(describeCancel(result));
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: select the runs with --status and --label, or name them ${inBatches('cancel')}`;
  }
}

/** One line per run: what happened to it. */
function describeCancel({ id, outcome, run }: CancelResult): string {
  if (!run) return `Run ${id} was removed meanwhile`;
  if (outcome === 'ended') return `Run ${id} already ${run.status}`;
  if (outcome === 'requested' && run.status === 'running') return `Cancel requested for run ${id}`;
  return `Run ${id} ${run.status}`;
}
