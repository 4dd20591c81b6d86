/**
 * How runs are shown as text, on the command line and in the dashboard's
 * runs table: their command and demands, and the columns of `fitq runs`.
 */
import { UsageError } from '../errors.js';
import { oneLine, quote } from '../text/quote.js';
import type { RunRecord } from '../model/run-record.js';
import { preemptingText } from '../model/preemption.js';
import { formatDuration, formatTime } from '../units/time.js';

/** Longest COMMAND and LABELS cells before they are cut (not with --wide). */
export const MAX_CELL_LENGTH = 40;

/** The text cut to `max` characters, ending with "…" when cut; never splits a surrogate pair. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Text in double quotes, escaped as JSON and on one line: JSON escapes C0
 * controls but leaves DEL, C1, the line separators and the bidirectional
 * controls as they are, so oneLine escapes those.
 */
function doubleQuoted(text: string): string {
  return oneLine(JSON.stringify(text));
}

/** A run's command as a shell would take it, on one line. */
export function formatCommand(run: RunRecord): string {
  return run.shell ? `sh -c ${doubleQuoted(run.command[0] ?? '')}` : run.command.map(quoteArg).join(' ');
}

function quoteArg(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  // An argument with a line break or another control character is shown escaped, on one line.
  if (oneLine(arg) !== arg) return doubleQuoted(arg);
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Demands as typed, then the GPU devices a run is pinned to: "gpu=1 mem=8G @0,1"; "-" for none. */
export function describeDemands(run: RunRecord): string {
  const pin = run.pinnedGpus && run.pinnedGpus.length > 0 ? `@${run.pinnedGpus.join(',')}` : '';
  return [run.requires, pin].filter((part) => part !== '').join(' ') || '-';
}

/** Labels as `k=v` pairs, values with spaces or quotes in JSON quotes; on one line. */
export function formatLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${oneLine(key)}=${/[\s'"]/.test(value) ? doubleQuoted(value) : oneLine(value)}`)
    .join(' ');
}

/** A run's status, `running (worker not responding)` while its worker does not answer. */
export function statusText(run: RunRecord): string {
  return run.status === 'running' && run.workerResponding === false ? 'running (worker not responding)' : run.status;
}

interface Column {
  title: string;
  /** Cut to MAX_CELL_LENGTH unless --wide. */
  cut?: boolean;
  cell: (run: RunRecord, now: number) => string;
}

/** Every column of `fitq runs`, in the order --wide shows them. */
const COLUMNS = {
  id: { title: 'ID', cell: (run) => run.id },
  status: { title: 'STATUS', cell: statusText },
  user: { title: 'USER', cell: (run) => run.user ?? '' },
  requires: { title: 'REQUIRES', cell: describeDemands },
  command: { title: 'COMMAND', cut: true, cell: formatCommand },
  labels: { title: 'LABELS', cut: true, cell: (run) => formatLabels(run.labels) },
  array: { title: 'ARRAY', cell: (run) => (run.array === undefined ? '' : `${run.array}[${run.arrayIndex ?? ''}]`) },
  priority: { title: 'PRIORITY', cell: (run) => String(run.priority) },
  worker: { title: 'WORKER', cell: (run) => run.worker ?? '' },
  staged: { title: 'STAGED', cell: (run, now) => formatTime(run.stagedAt, now) },
  started: { title: 'STARTED', cell: (run, now) => formatTime(run.startedAt, now) },
  duration: {
    title: 'DURATION',
    cell: (run, now) => formatDuration(run.startedAt === undefined ? undefined : (run.endedAt ?? now) - run.startedAt),
  },
  exit: { title: 'EXIT', cell: (run) => (run.exitCode !== undefined ? String(run.exitCode) : (run.signal ?? '')) },
  why: { title: 'WHY', cell: (run) => (run.status === 'completed' ? '' : oneLine(preemptingText(run) ?? run.reason ?? '')) },
} satisfies Record<string, Column>;

export type ColumnName = keyof typeof COLUMNS;
export const COLUMN_NAMES = Object.keys(COLUMNS) as ColumnName[];
export const DEFAULT_COLUMNS: readonly ColumnName[] = ['id', 'status', 'user', 'requires', 'command', 'worker', 'started', 'duration', 'exit', 'why'];

/** Parses `--columns id,status,command`; an unknown, repeated or empty name is a UsageError quoting it. */
export function parseColumns(text: string): ColumnName[] {
  const names: ColumnName[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim().toLowerCase();
    if (!Object.hasOwn(COLUMNS, name)) {
      throw new UsageError(`unknown column ${quote(raw)} in --columns ${quote(text)}: choose from ${COLUMN_NAMES.join(', ')}`);
    }
    if (names.includes(name as ColumnName)) throw new UsageError(`column ${quote(raw)} given twice in --columns ${quote(text)}`);
    names.push(name as ColumnName);
  }
  return names;
}

/** A cell's text, cut to MAX_CELL_LENGTH in a column that is cut, unless `wide`. */
export function cutCell(name: ColumnName, text: string, wide: boolean): string {
  return (COLUMNS[name] as Column).cut && !wide ? truncate(text, MAX_CELL_LENGTH) : text;
}

/** A run's cells in these columns; `wide` cuts nothing. */
export function runCells(run: RunRecord, columns: readonly ColumnName[], wide: boolean, now: number): string[] {
  return columns.map((name) => cutCell(name, (COLUMNS[name] as Column).cell(run, now), wide));
}

/** The titles of these columns. */
export function columnTitles(columns: readonly ColumnName[]): string[] {
  return columns.map((name) => COLUMNS[name].title);
}

/** The header and rows of a runs table; `wide` cuts nothing. */
export function runTable(runs: readonly RunRecord[], columns: readonly ColumnName[], wide: boolean, now = Date.now()): { header: string[]; rows: string[][] } {
  return { header: columnTitles(columns), rows: runs.map((run) => runCells(run, columns, wide, now)) };
}
