/**
 * Run output, kept in a Redis stream per run (`runs:<id>:output`), trimmed
 * to the last `logMaxLines` lines. Each entry is one line of stdout or
 * stderr, appended by the appendLog script with its number among the lines
 * of its attempt, so readers tell exactly how many lines are missing where,
 * and why (OutputGaps); the last entry of an ended run is an end marker.
 * When a run ends with a short log, the script that ends it packs the
 * stream's entries into one string (`runs:<id>:output:packed`, JSON of what
 * XRANGE gives) and deletes the stream, which would take about 4 KB however
 * few its lines: readers read both, packed entries first.
 * Followers wait on the stream and on the queue's event stream, where the
 * run's end shows even when its log was packed. The reads are
 * operations/log-reads.ts's; this module says what an entry is.
 */

/** Lines kept per run; the stream keeps at least this many. */
export const DEFAULT_LOG_MAX_LINES = 10_000;

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

/** Where a batch of lines stands among the lines of its attempt, and what was lost right before it. */
export interface LogPosition {
  /** The number of its first line (1: the attempt's first). */
  first: number;
  /** Lines its worker dropped right before it: more output waited than it keeps while Redis is slow. */
  slow: number;
  /** Lines Redis refused right before it (out of memory, or an error past every retry). */
  refused: number;
}

export type LogEntry = { id: string } & (
  | {
      kind: 'line';
      stream: 'stdout' | 'stderr';
      line: string;
      /** Its number among the lines of its attempt (absent in logs written before fitq numbered them). */
      n?: number;
      /** Lines dropped right before it, by cause (see LogPosition). */
      slow?: number;
      refused?: number;
    }
  | { kind: 'end'; status: string }
  /** Its worker died and it went back to staged; output of the next attempt follows. */
  | { kind: 'restaged'; reason: string }
);

/** A log stream entry (its id and fields, as XRANGE and XREAD give them) as a LogEntry. */
export function parseLogEntry(id: string, flat: string[]): LogEntry {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  if (fields.event === 'end') return { id, kind: 'end', status: fields.status ?? '' };
  if (fields.event === 'restaged') return { id, kind: 'restaged', reason: fields.reason ?? '' };
  const count = (name: string): { [name]?: number } => {
    const value = Number(fields[name]);
    return fields[name] !== undefined && Number.isSafeInteger(value) && value >= 0 ? { [name]: value } : {};
  };
  return { id, kind: 'line', stream: fields.stream === 'stderr' ? 'stderr' : 'stdout', line: fields.line ?? '', ...count('n'), ...count('slow'), ...count('refused') };
}

/**
 * Says where lines of a run's output are missing, reading its entries in
 * order (one per reader: `fitq logs`, `-f`, `stage --follow`): before a
 * line, the lines between it and the last one read of its attempt, by
 * cause. Those its worker dropped or Redis refused are counted on the line
 * after them; the rest were not stored because a run keeps only its last
 * `maxLines` lines (trimmed from the front, or dropped by the worker as
 * newer lines were waiting).
 */
export class OutputGaps {
  /** The number of the last line read of the current attempt (0: none yet); undefined: not known. */
  private last: number | undefined = 0;

  constructor(private readonly maxLines: number) {}

  /** The notes to show before `entry`, as `[fitq: …]` lines. */
  notesBefore(entry: LogEntry): string[] {
    if (entry.kind === 'restaged') this.last = 0;
    if (entry.kind !== 'line') return [];
    const last = this.last;
    this.last = entry.n;
    if (entry.n === undefined || last === undefined || entry.n <= last + 1) return [];
    const missing = entry.n - last - 1;
    const slow = Math.min(entry.slow ?? 0, missing);
    const refused = Math.min(entry.refused ?? 0, missing - slow);
    const capped = missing - slow - refused;
    const lines = (count: number) => `${count} line${count === 1 ? '' : 's'}`;
    return [
      ...(capped > 0 ? [`[fitq: ${lines(capped)} not stored: a run's stored output is capped at its last ${this.maxLines} lines; use --output FILE to keep all of it]`] : []),
      ...(slow > 0 ? [`[fitq: ${lines(slow)} dropped while Redis was slow: more of the run's output waited to be stored than its worker keeps]`] : []),
      ...(refused > 0 ? [`[fitq: ${lines(refused)} not stored: Redis refused them]`] : []),
    ];
  }
}

/** Whether stream entry id `id` comes after `after` ("0" before all). */
export function isAfter(id: string, after: string): boolean {
  const [ms = '0', seq = '0'] = id.split('-');
  const [afterMs = '0', afterSeq = '0'] = after.split('-');
  return BigInt(ms) > BigInt(afterMs) || (BigInt(ms) === BigInt(afterMs) && BigInt(seq) > BigInt(afterSeq));
}
