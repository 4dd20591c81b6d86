/**
 * The dashboard's runs table, as data: which runs a query selects (status,
 * label, array, worker, free text) and each row's cells, taken from the
 * columns of `fitq runs` (present/run-table.ts) so the WHY cell is the
 * very text `fitq runs` prints (readRunPage explains the page's staged runs
 * with the claim's own policy). A page is read as `fitq runs` reads one
 * (operations/run-pages.ts: the order index, never every run). An array is
 * one row of the page's runs, as `fitq runs` prints it
 * (present/array-lines.ts), unless the query names it or asks for every
 * run (`expand`). Rendering is pages/runs.ts's.
 */
import { parseKeyValues } from '../present/key-values.js';
import { COLUMN_NAMES, formatCommand, formatLabels, type ColumnName } from '../present/run-table.js';
import { lineRows, type ArrayLine, type ListLine } from '../present/array-lines.js';
import { pageLines } from '../present/page-lines.js';
import { UsageError } from '../errors.js';
import type { FitqClient } from '../client.js';
import { oneLine, quote } from '../text/quote.js';
import { validateQueueName, validateRunId, validateWorkerName } from '../model/names.js';
import { RUN_STATUSES, type RunFilter, type RunRecord, type RunStatus } from '../model/run-record.js';
import { checkUserName } from '../model/stager.js';

/** What the runs page shows: every given condition must hold. */
export interface RunQuery {
  /** Only this namespace (none: every namespace shown). */
  queue?: string;
  /** Any of these (none: any status). */
  statuses: RunStatus[];
  /** Every one of these labels, with exactly this value. */
  labels: Record<string, string>;
  /** Runs of this array: its id or a unique prefix of one. */
  array?: string;
  /** Runs on (or last on) this worker. */
  worker?: string;
  /** Runs this user staged. */
  user?: string;
  /** Words found, case-insensitively, in the id, the command or the labels. */
  text?: string;
  /** Every run its own row, an array's too (by default an array is one row; `array` lists its runs). */
  expand?: boolean;
  /** The page: the newest MAX_ROWS runs staged before this staging number (`before`), or the oldest after it (`after`); neither: the newest. */
  before?: number;
  after?: number;
}

/** Query parameters of the runs page and its fragment; `token` is the dashboard's own (auth.ts). */
export const RUN_QUERY_PARAMS = ['queue', 'status', 'label', 'array', 'worker', 'user', 'q', 'expand', 'before', 'after'] as const;
const PASSED_THROUGH = new Set<string>(['token']);

/** Most runs one page shows (a namespace may hold 100,000 runs): older and newer pages show the rest. */
export const MAX_ROWS = 500;

/**
 * Reads the query of `/runs?queue=..&status=staged&label=k=v&array=..&worker=..&user=..&q=..`
 * (status and label repeatable; status also comma-separated). An empty field
 * of the form is no condition; anything else that is not valid is a
 * UsageError quoting it, as the CLI refuses it.
 */
export function parseRunQuery(params: URLSearchParams): RunQuery {
  for (const name of params.keys()) {
    if (!(RUN_QUERY_PARAMS as readonly string[]).includes(name) && !PASSED_THROUGH.has(name)) {
      throw new UsageError(`unknown filter ${quote(name)}: choose from ${RUN_QUERY_PARAMS.join(', ')}`);
    }
  }
  const statuses: RunStatus[] = [];
  for (const value of params.getAll('status').flatMap((text) => text.split(','))) {
    const status = value.trim();
    if (status === '') continue;
    if (!(RUN_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`unknown status ${quote(status)}: choose from ${RUN_STATUSES.join(', ')}`);
    }
    if (!statuses.includes(status as RunStatus)) statuses.push(status as RunStatus);
  }
  const labels = parseKeyValues('label', params.getAll('label').filter((label) => label.trim() !== ''));
  const query: RunQuery = { statuses, labels };
  const queue = params.get('queue')?.trim();
  if (queue) query.queue = validateQueueName(queue);
  const array = params.get('array')?.trim();
  if (array) {
    validateRunId(array);
    query.array = array;
  }
  const worker = params.get('worker')?.trim();
  if (worker) {
    validateWorkerName(worker);
    query.worker = worker;
  }
  const user = params.get('user')?.trim();
  if (user) query.user = checkUserName(user, 'user');
  const text = params.get('q')?.trim();
  if (text) query.text = text;
  const expand = params.get('expand')?.trim();
  if (expand) {
    if (expand !== '1') throw new UsageError(`invalid expand=${quote(expand)}: expected 1 (every run its own row)`);
    query.expand = true;
  }
  const before = pagePosition(params, 'before', 1);
  const after = pagePosition(params, 'after', 0);
  if (before !== undefined && after !== undefined) throw new UsageError('give before or after, not both');
  if (before !== undefined) query.before = before;
  if (after !== undefined) query.after = after;
  return query;
}

/** A page position (a run's staging number, `seq`) given as `name`, at least `least`; an empty field is none. */
function pagePosition(params: URLSearchParams, name: 'before' | 'after', least: number): number | undefined {
  const text = params.get(name)?.trim();
  if (!text) return undefined;
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= least)) throw new UsageError(`invalid page position ${name}=${quote(text)}: expected a run's staging number (${least} or more)`);
  return value;
}

/** The query as URL parameters (for the fragment route and links), in a fixed order. */
export function runQueryParams(query: RunQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.queue !== undefined) params.set('queue', query.queue);
  for (const status of query.statuses) params.append('status', status);
  for (const [key, value] of Object.entries(query.labels)) params.append('label', `${key}=${value}`);
  if (query.array !== undefined) params.set('array', query.array);
  if (query.worker !== undefined) params.set('worker', query.worker);
  if (query.user !== undefined) params.set('user', query.user);
  if (query.text !== undefined) params.set('q', query.text);
  if (query.expand) params.set('expand', '1');
  if (query.before !== undefined) params.set('before', String(query.before));
  if (query.after !== undefined) params.set('after', String(query.after));
  return params;
}

/**
 * One row: a run, or an array's runs (`array`) where its first run (`run`)
 * stands, and its cells as `fitq runs --wide` prints them (nothing cut, each
 * on one line).
 */
export interface RunRow {
  run: RunRecord;
  array?: ArrayLine;
  cells: Record<ColumnName, string>;
}

export interface RunListing {
  /** The page: at most MAX_ROWS runs (an array's one row, unless expanded), in staging order. */
  rows: RunRow[];
  /** Runs on the page, and the staging numbers of its first and last: where the pages around it start. */
  shown: number;
  first?: number;
  last?: number;
  /** Runs that match, on any page, and how many come before the page and after it: counted only when nothing is selected (the order index's counts). */
  total?: number;
  older?: number;
  newer?: number;
  /** Whether runs may match before the page, and after it. */
  hasOlder: boolean;
  hasNewer: boolean;
}

/** A listing of no run. */
export const NO_LISTING: RunListing = { rows: [], shown: 0, total: 0, older: 0, newer: 0, hasOlder: false, hasNewer: false };

/** Whether every word of `text` is in the run's id, command or labels (case-insensitive). */
export function matchesText(run: RunRecord, text: string): boolean {
  const haystack = [run.id, run.command.join(' '), formatCommand(run), formatLabels(run.labels), ...Object.entries(run.labels).map(([key, value]) => `${key}=${value}`)]
    .join('\n')
    .toLowerCase();
  return text.toLowerCase().split(/\s+/).filter(Boolean).every((word) => haystack.includes(word));
}

/**
 * The page of runs a query selects, in staging order (the newest MAX_ROWS,
 * or those before or after its position), each with its cells, read a
 * page at a time (operations/run-pages.ts: no read of every run), and
 * where it stands among the others. Status, labels and array select as
 * `fitq runs` does, and so does user (an unknown or ambiguous array is its UsageError);
 * worker and text are matched on each run read.
 */
export async function listRunRows(client: FitqClient, query: RunQuery, now = Date.now()): Promise<RunListing> {
  const filter: RunFilter = {
    ...(query.statuses.length > 0 ? { statuses: query.statuses } : {}),
    labels: query.labels,
    ...(query.array === undefined ? {} : { array: query.array }),
    ...(query.user === undefined ? {} : { user: query.user }),
  };
  const { worker, text } = query;
  const where = worker === undefined && text === undefined
    ? undefined
    : (run: RunRecord) => (worker === undefined || run.worker === worker) && (text === undefined || matchesText(run, text));
  const forward = query.after !== undefined;
  const from = query.after ?? query.before;
  const page = await client.readRunPage({ filter, ...(where ? { where } : {}), ...(from === undefined ? {} : { from }), backward: !forward, limit: MAX_ROWS });
  const { runs } = page;
  const selected = query.statuses.length > 0 || Object.keys(query.labels).length > 0 || worker !== undefined || query.user !== undefined || text !== undefined;
  const collapse = !query.expand && query.array === undefined;
  const lines: ListLine[] = await pageLines(client, runs, { collapse, selected });
  const rows = lineRows(lines, COLUMN_NAMES, true, now);
  const first = runs[0]?.seq;
  const last = runs[runs.length - 1]?.seq;
  const listing: RunListing = {
    rows: lines.map((line, i) => ({
      ...line,
      cells: Object.fromEntries(COLUMN_NAMES.map((name, column) => [name, oneLine(rows[i]![column]!)])) as Record<ColumnName, string>,
    })),
    shown: runs.length,
    ...(first === undefined ? {} : { first }),
    ...(last === undefined ? {} : { last }),
    // Not known without reading on: a backward page's older runs, a forward page's newer ones, by `next`; the others from the position it came from.
    hasOlder: forward ? (query.after ?? 0) > 0 : page.next !== undefined,
    hasNewer: forward ? page.next !== undefined : query.before !== undefined,
  };
  if (selected || query.array !== undefined) return listing;
  // Nothing selected: the order index counts the runs around the page.
  const [total, older, newer] = await Promise.all([
    client.countRuns(),
    first === undefined ? Promise.resolve(undefined) : client.countRuns(first, true),
    last === undefined ? Promise.resolve(undefined) : client.countRuns(last),
  ]);
  const before = older ?? (forward ? total : 0);
  const after = newer ?? (forward ? 0 : total);
  return { ...listing, total, older: before, newer: after, hasOlder: before > 0, hasNewer: after > 0 };
}
