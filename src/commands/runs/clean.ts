import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { reportDryRun } from '../../cli/run-selection.js';
import { parseDuration } from '../../units/duration.js';
import { parseIntegerOption } from '../../model/run-checks.js';
import { cleanableStatuses } from '../../model/retention.js';
import { ENDED_STATUSES } from '../../model/run-record.js';
import { CLEAN_CHUNK } from '../../operations/chunks.js';

export default class RunsClean extends FitqCommand {
  static override summary = 'Remove ended runs now, with their output: all of them, or those selected.';
  static override description =
    'Every ended run (completed, failed, canceled, lost, rejected, timeout), or only those with --status, ' +
    'that ended more than --older-than ago, less the --keep most recently ended of them (all given must hold). ' +
    'Staged and running runs are never removed; --dry-run lists what would be removed. ' +
    'Retention (fitq retention) removes old runs as others end; this clears them at once. ' +
    `Many runs go ${CLEAN_CHUNK} per script call, so Redis is never held long: a read meanwhile may show some removed and the rest not yet.`;
  static override examples = [
    '<%= config.bin %> runs clean',
    '<%= config.bin %> runs clean --status completed --older-than 7d',
    '<%= config.bin %> runs clean --status failed,canceled,lost,rejected --keep 100',
    '<%= config.bin %> runs clean --older-than 30d --dry-run',
  ];
  static override flags = {
    status: Flags.string({
      multiple: true,
      delimiter: ',',
      summary: `Only runs with this status: ${ENDED_STATUSES.join(', ')} (repeatable, or comma-separated: completed,canceled); default: every ended one.`,
    }),
    'older-than': Flags.string({ summary: 'Only runs that ended more than this long ago: 7d, 12h, 30m, 1h30m.' }),
    keep: Flags.string({ summary: 'Keep the N most recently ended of the selected runs.' }),
    'dry-run': Flags.boolean({ summary: 'List the runs it would remove (with --json: as JSON), and remove nothing.' }),
    json: Flags.boolean({ summary: 'Print the removed run ids as JSON (with --dry-run: the runs it would remove).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RunsClean);
    // Checked before connecting: a mistake costs no round trip.
    const options = {
      statuses: cleanableStatuses(flags.status),
      olderThanMs: flags['older-than'] === undefined ? undefined : parseDuration('--older-than', flags['older-than']),
      keep: flags.keep === undefined ? undefined : parseIntegerOption('--keep', flags.keep, 0, Number.MAX_SAFE_INTEGER),
    };
    const removed = await this.withClient(flags, async (client) => {
      const ids = await client.selectCleanRuns(options);
      if (flags['dry-run']) {
        reportDryRun(this, 'remove', await client.readRuns(ids), flags);
        return undefined;
      }
      return { ids, count: await client.cleanRuns(options, ids) };
    });
    if (!removed) return;
    if (flags.json) this.log(JSON.stringify(removed.ids));
    else this.log(`Removed ${removed.count} run${removed.count === 1 ? '' : 's'}.`);
  }
}
