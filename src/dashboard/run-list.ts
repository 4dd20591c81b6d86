/**
 * The dashboard's runs table, as data: which runs a query selects (status,
 * label, array, worker, free text) and each row's cells, taken from the
 * columns of `fitq runs` (cli/run-table.ts) so the WHY cell is the very text
 * `fitq runs` prints (listRuns explains every staged run with the claim's own
 * policy). Rendering is pages/runs.ts's.
 */
import { parseKeyValues } from '../cli/base-command.js';
import { COLUMN_NAMES, formatCommand, formatLabels, runTable, type ColumnName } from '../cli/run-table.js';
import { UsageError } from '../errors.js';
import type { FitqClient } from '../queue/client.js';
import { oneLine, quote, validateQueueName, validateRunId, validateWorkerName } from '../queue/names.js';
import { RUN_STATUSES, type RunFilter, type RunRecord, type RunStatus } from '../queue/run-record.js';

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
  /** Words found, case-insensitively, in the id, the command or the labels. */
  text?: string;
}

/** Query parameters of the runs page and its fragment; `token` is the dashboard's own (auth.ts). */
export const RUN_QUERY_PARAMS = ['queue', 'status', 'label', 'array', 'worker', 'q'] as const;
const PASSED_THROUGH = new Set<string>(['token']);

/** Most rows one page shows: the newest that match (a namespace may hold 100,000 runs). */
export const MAX_ROWS = 500;

/**
 * Reads the query of `/runs?queue=..&status=staged&label=k=v&array=..&worker=..&q=..`
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
  const text = params.get('q')?.trim();
  if (text) query.text = text;
  return query;
}

/** The query as URL parameters (for the fragment route and links), in a fixed order. */
export function runQueryParams(query: RunQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.queue !== undefined) params.set('queue', query.queue);
  for (const status of query.statuses) params.append('status', status);
  for (const [key, value] of Object.entries(query.labels)) params.append('label', `${key}=${value}`);
  if (query.array !== undefined) params.set('array', query.array);
  if (query.worker !== undefined) params.set('worker', query.worker);
  if (query.text !== undefined) params.set('q', query.text);
  return params;
}

/** One row: the run and its cells as `fitq runs --wide` prints them (nothing cut, each on one line). */
export interface RunRow {
  run: RunRecord;
  cells: Record<ColumnName, string>;
}

export interface RunListing {
  rows: RunRow[];
  /** Runs that matched beyond MAX_ROWS (the oldest), not shown. */
  hidden: number;
}

/** Whether every word of `text` is in the run's id, command or labels (case-insensitive). */
export function matchesText(run: RunRecord, text: string): boolean {
  const haystack = [run.id, run.command.join(' '), formatCommand(run), formatLabels(run.labels), ...Object.entries(run.labels).map(([key, value]) => `${key}=${value}`)]
    .join('\n')
    .toLowerCase();
  return text.toLowerCase().split(/\s+/).filter(Boolean).every((word) => haystack.includes(word));
}

/**
 * The runs a query selects, in staging order (the newest MAX_ROWS), each
 * with its cells. Status, labels and array go to listRuns (an unknown or
 * ambiguous array is its UsageError); worker and text are matched here.
 */
export async function listRunRows(client: FitqClient, query: RunQuery, now = Date.now()): Promise<RunListing> {
  const filter: RunFilter = {
    ...(query.statuses.length > 0 ? { statuses: query.statuses } : {}),
    labels: query.labels,
    ...(query.array === undefined ? {} : { array: query.array }),
  };
  const runs = (await client.listRuns(filter)).filter(
    (run) => (query.worker === undefined || run.worker === query.worker) && (query.text === undefined || matchesText(run, query.text)),
  );
  const shown = runs.slice(Math.max(0, runs.length - MAX_ROWS));
  const { rows } = runTable(shown, COLUMN_NAMES, true, now);
  return {
    rows: shown.map((run, i) => ({ run, cells: Object.fromEntries(COLUMN_NAMES.map((name, column) => [name, oneLine(rows[i]![column]!)])) as Record<ColumnName, string> })),
    hidden: runs.length - shown.length,
  };
}
