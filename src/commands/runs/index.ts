import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { parseKeyValues } from '../../present/key-values.js';
import { renderTable } from '../../cli/format.js';
import { COLUMN_NAMES, DEFAULT_COLUMNS, columnTitles, formatCommand, parseColumns } from '../../present/run-table.js';
import { anyArrayLimit, arrayLimits, collapseArrays, lineRows } from '../../present/array-lines.js';
import { dependencyEdges } from '../../model/dependencies.js';
import { renderTree } from '../../present/dependency-tree.js';
import { UsageError } from '../../errors.js';
import { oneLine, quote } from '../../text/quote.js';
import { RUN_STATUSES, type RunStatus } from '../../model/run-record.js';

export default class Runs extends FitqCommand {
  static override summary = 'List runs: status, demands, command, worker, timing, and why each staged run waits.';
  static override description =
    `Columns: ${COLUMN_NAMES.join(', ')} (default: ${DEFAULT_COLUMNS.join(', ')}). ` +
    'COMMAND and LABELS are cut to 40 characters unless --wide. ' +
    'An array (--array, --param) is one line, where its oldest run stands, as squeue shows a job array: ' +
    'ID is ARRAY_[INDICES%LIMIT], STATUS how many of its runs stand in each status, COMMAND the command its runs share ' +
    '(the words that differ as their placeholders, or *), WHY why its waiting runs wait, and the other columns what all its runs show alike. ' +
    '--expand, or --array ID, lists its runs one a line; --status and --label select runs before they are counted.';
  static override examples = [
    '<%= config.bin %> runs',
    '<%= config.bin %> runs --status staged --status running --label sweep=lr',
    '<%= config.bin %> runs --columns id,status,command,labels',
    '<%= config.bin %> runs --expand',
    '<%= config.bin %> runs --array 3f2a --columns id,status,array,command',
    '<%= config.bin %> runs --wide',
    '<%= config.bin %> runs --json',
    '<%= config.bin %> runs --tree',
  ];
  static override flags = {
    status: Flags.string({ multiple: true, delimiter: ',', options: [...RUN_STATUSES], summary: 'Only runs with this status (repeatable, or comma-separated: staged,running).' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Only runs with this KEY=VALUE label (repeatable: all must match).' }),
    array: Flags.string({ summary: 'Only the runs of this array (its id, or a unique prefix of it), one a line.' }),
    expand: Flags.boolean({ summary: 'Every run on its own line, an array\'s too (by default an array is one line).' }),
    columns: Flags.string({ summary: 'Columns to show, comma separated, e.g. id,status,command.' }),
    wide: Flags.boolean({ summary: 'Every column (or those of --columns), nothing cut.' }),
    json: Flags.boolean({ summary: 'Print the runs as a JSON array (every field; not with --columns or --wide).' }),
    tree: Flags.boolean({
      summary: 'Show the dependency graph: each run under the runs it waits for (--after…), as pstree does; with --json, the runs and the edges.',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Runs);
    if (flags.json && (flags.columns !== undefined || flags.wide)) {
      throw new UsageError(`--json prints every field: it takes no ${flags.wide ? '--wide' : `--columns ${quote(flags.columns ?? '')}`}`);
    }
    const filter = {
      statuses: flags.status as RunStatus[] | undefined,
      labels: parseKeyValues('--label', flags.label),
      ...(flags.array === undefined ? {} : { array: flags.array }),
    };
    const columns = flags.columns !== undefined ? parseColumns(flags.columns) : flags.wide ? COLUMN_NAMES : DEFAULT_COLUMNS;
    // An array is one line, unless its runs are asked for; its limit (%N) is read from the pool.
    const collapse = !flags.expand && flags.array === undefined && !flags.json && !flags.tree;
    const { runs, limits } = await this.withClient(flags, async (client) => {
      const runs = await client.listRuns(filter);
      return { runs, limits: collapse && anyArrayLimit(runs) ? arrayLimits(await client.listPool()) : new Map<string, number>() };
    });
    if (flags.tree) {
      if (flags.json) this.log(JSON.stringify({ runs: runs.map(({ id, status, reason }) => ({ id, status, reason })), edges: dependencyEdges(runs) }, null, 2));
      else if (runs.length === 0) this.log('No runs.');
      else this.log(renderTree(runs, (run) => `${run.id} ${run.status} ${oneLine(formatCommand(run)).slice(0, flags.wide ? undefined : 40)}${run.reason && run.status !== 'completed' ? ` (${oneLine(run.reason)})` : ''}`).join('\n'));
      return;
    }
    if (flags.json) {
      this.log(JSON.stringify(runs, null, 2));
      return;
    }
    if (runs.length === 0) {
      this.log('No runs.');
      return;
    }
    const lines = collapse ? collapseArrays(runs, limits) : runs.map((run) => ({ run }));
    this.log(renderTable(columnTitles(columns), lineRows(lines, columns, flags.wide)));
  }
}
