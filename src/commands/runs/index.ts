import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { formatDuration, formatTime, renderTable } from '../../cli/format.js';
import { oneLine } from '../../queue/names.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../../queue/run-record.js';

export default class Runs extends FitqCommand {
  static override summary = 'List runs: status, demands, worker, timing, and why each staged run waits.';
  static override examples = ['<%= config.bin %> runs', '<%= config.bin %> runs --status staged --status running', '<%= config.bin %> runs --json'];
  static override flags = {
    status: Flags.string({ multiple: true, options: [...RUN_STATUSES], summary: 'Only runs with this status (repeatable).' }),
    json: Flags.boolean({ summary: 'Print the runs as a JSON array.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Runs);
    const runs = await this.withClient(flags, (client) => client.listRuns({ statuses: flags.status as RunStatus[] | undefined }));
    if (flags.json) {
      this.log(JSON.stringify(runs, null, 2));
      return;
    }
    if (runs.length === 0) {
      this.log('No runs.');
      return;
    }
    const now = Date.now();
    this.log(
      renderTable(
        ['ID', 'STATUS', 'REQUIRES', 'WORKER', 'STARTED', 'DURATION', 'EXIT', 'WHY'],
        runs.map((run) => [
          run.id,
          run.status,
          describeResources(run),
          run.worker ?? '',
          formatTime(run.startedAt, now),
          formatDuration(run.startedAt === undefined ? undefined : (run.endedAt ?? now) - run.startedAt),
          run.exitCode !== undefined ? String(run.exitCode) : (run.signal ?? ''),
          run.status === 'completed' ? '' : oneLine(run.reason ?? ''),
        ]),
      ),
    );
  }
}

export function describeResources(run: RunRecord): string {
  return run.requires || '-';
}
