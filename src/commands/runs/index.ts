import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { userFilter, userFlags } from '../../cli/user-selection.js';
import { parseKeyValues } from '../../present/key-values.js';
import { tableWriter } from '../../cli/format.js';
import { COLUMN_NAMES, DEFAULT_COLUMNS, columnTitles, formatCommand, parseColumns, type ColumnName } from '../../present/run-table.js';
import { lineRows, unlistedRuns, type ArrayLine, type ListLine } from '../../present/array-lines.js';
import { pageLines, type PageLineOptions } from '../../present/page-lines.js';
import { formatCursor, parseCursor } from '../../cli/run-cursor.js';
import type { FitqClient } from '../../client.js';
import { dependencyEdges } from '../../model/dependencies.js';
import { renderTree } from '../../present/dependency-tree.js';
import { UsageError } from '../../errors.js';
import { oneLine, quote } from '../../text/quote.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../../model/run-record.js';

/** Runs listed when neither --limit nor --all is given: the first screen. */
export const DEFAULT_LIMIT = 100;
/** Runs read per page while listing more (--all, a big --limit): each page is printed as it comes. */
const PAGE_RUNS = 500;

export default class Runs extends FitqCommand {
  static override summary = 'List runs: status, demands, command, worker, timing, and why each staged run waits.';
  static override description =
    `Columns: ${COLUMN_NAMES.join(', ')} (default: ${DEFAULT_COLUMNS.join(', ')}). ` +
    'COMMAND and LABELS are cut to 40 characters unless --wide. ' +
    'An array (--array, --param) is one line, where its oldest run stands, as squeue shows a job array: ' +
    'ID is ARRAY_[INDICES%LIMIT], STATUS how many of its runs stand in each status, COMMAND the command its runs share ' +
    '(the words that differ as their placeholders, or *), WHY why its waiting runs wait, and the other columns what all its runs show alike. ' +
    '--expand, or --array ID, lists its runs one a line; --status and --label select runs before they are counted. ' +
    `Runs are read a page at a time: the first ${DEFAULT_LIMIT} by default (stderr says how many more, and how to see them), ` +
    '--limit N, or --all; an array line lists the runs read with it and counts all of its runs by its tally (`99900 not ended, 100 completed`) ' +
    'when it has more than those and no --status or --label selects runs. --json prints a page and where the next starts (--cursor).';
  static override examples = [
    '<%= config.bin %> runs',
    '<%= config.bin %> runs --status staged --status running --label sweep=lr',
    '<%= config.bin %> runs --mine',
    '<%= config.bin %> runs --user alice --status running',
    '<%= config.bin %> runs --columns id,status,command,labels',
    '<%= config.bin %> runs --expand',
    '<%= config.bin %> runs --array 3f2a --columns id,status,array,command',
    '<%= config.bin %> runs --wide',
    '<%= config.bin %> runs --limit 20',
    '<%= config.bin %> runs --all --status failed',
    '<%= config.bin %> runs --json --limit 1000',
    '<%= config.bin %> runs --json --limit 1000 --cursor 1000',
    '<%= config.bin %> runs --tree',
  ];
  static override flags = {
    status: Flags.string({ multiple: true, delimiter: ',', options: [...RUN_STATUSES], summary: 'Only runs with this status (repeatable, or comma-separated: staged,running).' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Only runs with this KEY=VALUE label (repeatable: all must match).' }),
    array: Flags.string({ summary: 'Only the runs of this array (its id, or a unique prefix of it), one a line.' }),
    ...userFlags('Only'),
    expand: Flags.boolean({ summary: 'Every run on its own line, an array\'s too (by default an array is one line).' }),
    columns: Flags.string({ summary: 'Columns to show, comma separated, e.g. id,status,command.' }),
    wide: Flags.boolean({ summary: 'Every column (or those of --columns), nothing cut.' }),
    limit: Flags.integer({ min: 1, summary: `List at most this many runs, in staging order (default ${DEFAULT_LIMIT}: the first screen; stderr says how many more).` }),
    all: Flags.boolean({ summary: 'List every run (read and printed a page at a time).' }),
    cursor: Flags.string({ summary: 'Go on from where an earlier listing stopped: the "next" of its --json (or the number its note on stderr gives).' }),
    json: Flags.boolean({
      summary: 'Print {"runs": [...], "next": CURSOR}: the runs with every field (not with --columns or --wide), and where the next page starts (null at the end).',
    }),
    tree: Flags.boolean({
      summary: 'Show the dependency graph: each run under the runs it waits for (--after…), as pstree does; with --json, the runs and the edges.',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Runs);
    if (flags.json && (flags.columns !== undefined || flags.wide)) {
      throw new UsageError(`--json prints every field: it takes no ${flags.wide ? '--wide' : `--columns ${quote(flags.columns ?? '')}`}`);
    }
    if (flags.all && flags.limit !== undefined) throw new UsageError(`--all lists every run: it takes no --limit ${flags.limit}`);
    const filter = {
      statuses: flags.status as RunStatus[] | undefined,
      labels: parseKeyValues('--label', flags.label),
      ...(flags.array === undefined ? {} : { array: flags.array }),
      ...userFilter(flags),
    };
    const from = flags.cursor === undefined ? undefined : parseCursor(flags.cursor);
    // --tree draws the whole graph: every run.
    const limit = flags.all || flags.tree ? Number.POSITIVE_INFINITY : (flags.limit ?? DEFAULT_LIMIT);
    const selected = (flags.status ?? []).length > 0 || flags.label !== undefined || filter.user !== undefined;
    const columns = flags.columns !== undefined ? parseColumns(flags.columns) : flags.wide ? COLUMN_NAMES : DEFAULT_COLUMNS;
    // An array is one line, unless its runs are asked for.
    const collapse = !flags.expand && flags.array === undefined && !flags.json && !flags.tree;
    await this.withClient(flags, async (client) => {
      const print = flags.tree ? undefined : flags.json ? jsonWriter((text) => process.stdout.write(text)) : tableLines(this, client, columns, flags.wide, { collapse, selected });
      const tree: RunRecord[] = [];
      let listed = 0;
      let next = from;
      for (;;) {
        const page = await client.readRunPage({ filter, ...(next === undefined ? {} : { from: next }), limit: Math.min(PAGE_RUNS, limit - listed) });
        listed += page.runs.length;
        next = page.next;
        if (print) await print.page(page.runs);
        else tree.push(...page.runs);
        if (next === undefined || listed >= limit) break;
      }
      if (flags.tree) return this.printTree(tree, flags);
      print?.end(formatCursor(next));
      if (next !== undefined && !flags.json) {
        const more = selected || flags.array !== undefined ? undefined : await client.countRuns(next);
        process.stderr.write(`${moreRunsNote(listed, more, next)}\n`);
      }
    });
  }

  private printTree(runs: readonly RunRecord[], flags: { json: boolean; wide: boolean }): void {
    if (flags.json) this.log(JSON.stringify({ runs: runs.map(({ id, status, reason }) => ({ id, status, reason })), edges: dependencyEdges(runs) }, null, 2));
    else if (runs.length === 0) this.log('No runs.');
    else this.log(renderTree(runs, (run) => `${run.id} ${run.status} ${oneLine(formatCommand(run)).slice(0, flags.wide ? undefined : 40)}${run.reason && run.status !== 'completed' ? ` (${oneLine(run.reason)})` : ''}`).join('\n'));
  }
}

/** What a listing cut short says on stderr: how many more runs there are (when known) and how to see them. */
function moreRunsNote(listed: number, more: number | undefined, next: number): string {
  const howMany = more === undefined ? 'more may match' : `${more} more run${more === 1 ? '' : 's'}`;
  return `Listed the first ${listed} run${listed === 1 ? '' : 's'}; ${howMany}: fitq runs --all, --limit N, or --cursor ${next} for the next page.`;
}

interface PagePrinter {
  page(runs: readonly RunRecord[]): Promise<void>;
  end(next: string | null): void;
}

/** `{"runs": [...], "next": ...}` as JSON.stringify(…, null, 2) prints it, written a page at a time. */
function jsonWriter(write: (text: string) => void): PagePrinter {
  let count = 0;
  return {
    async page(runs) {
      for (const run of runs) {
        write(`${count === 0 ? '{\n  "runs": [\n' : ',\n'}${JSON.stringify(run, null, 2).replace(/^/gm, '    ')}`);
        count++;
      }
    },
    end(next) {
      write(`${count === 0 ? '{\n  "runs": [],' : '\n  ],'}\n  "next": ${JSON.stringify(next)}\n}\n`);
    },
  };
}

/**
 * The table, printed a page at a time. Each array is one line where its
 * first run stands, gathering its runs from the pages that follow: the
 * lines from an array line on wait until all its runs are read (its tally
 * says how many; with --status or --label, until the listing ends), or
 * until the listing ends.
 */
function tableLines(command: { log(text: string): void }, client: FitqClient, columns: readonly ColumnName[], wide: boolean, options: PageLineOptions): PagePrinter {
  const write = tableWriter(columnTitles(columns));
  const open = new Map<string, ArrayLine>();
  const printed = new Set<string>();
  let pending: ListLine[] = [];
  let any = false;
  const complete = (line: ArrayLine) => line.tally !== undefined && unlistedRuns(line) === 0;
  const flush = (all: boolean) => {
    const waiting = all ? pending.length : pending.findIndex((line) => line.array !== undefined && !complete(line.array));
    const ready = pending.slice(0, waiting === -1 ? pending.length : waiting);
    pending = pending.slice(ready.length);
    if (ready.length === 0) return;
    for (const line of ready) if (line.array) printed.add(line.array.array);
    any = true;
    command.log(write(lineRows(ready, columns, wide)));
  };
  return {
    async page(runs) {
      const fresh: RunRecord[] = [];
      for (const run of runs) {
        const line = run.array === undefined || !options.collapse ? undefined : open.get(run.array);
        if (line) line.runs.push(run);
        else if (run.array === undefined || !options.collapse || !printed.has(run.array)) fresh.push(run);
      }
      const lines = await pageLines(client, fresh, options);
      for (const line of lines) if (line.array) open.set(line.array.array, line.array);
      pending.push(...lines);
      flush(false);
    },
    end() {
      flush(true);
      if (!any) command.log('No runs.');
    },
  };
}
