/**
 * Run output, kept in a Redis stream per run (`runs:<id>:output`), trimmed
 * to the last `logMaxLines` lines. Each entry is one line of stdout or
 * stderr, appended by the appendLog script with its number among the lines
 * of its attempt, so readers tell exactly how many lines are missing where,
 * and why (OutputGaps); the last entry of an ended run is an end marker. When a run ends with a short log, the script that ends it
 * packs the stream's entries into one string (`runs:<id>:output:packed`,
 * JSON of what XRANGE gives) and deletes the stream, which would take about
 * 4 KB however few its lines: readers read both, packed entries first.
 * Followers wait on the stream and on the queue's event stream, where the
 * run's end shows even when its log was packed.
 */
import { execPipeline } from './pipeline.js';
import type { Redis } from 'ioredis';
import { StoredDataError } from '../errors.js';
import type { NamespaceKeys } from './keys.js';

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

type RawEntry = [id: string, fields: string[]];

/** Whether stream entry id `id` comes after `after` ("0" before all). */
export function isAfter(id: string, after: string): boolean {
  const [ms = '0', seq = '0'] = id.split('-');
  const [afterMs = '0', afterSeq = '0'] = after.split('-');
  return BigInt(ms) > BigInt(afterMs) || (BigInt(ms) === BigInt(afterMs) && BigInt(seq) > BigInt(afterSeq));
}

/** The entries of a packed log, as XRANGE gave them when it was packed. */
function unpack(key: string, runId: string, packed: string): RawEntry[] {
  let entries: unknown;
  try {
    entries = JSON.parse(packed);
  } catch {
    entries = undefined;
  }
  const valid = (entry: unknown): entry is RawEntry =>
    Array.isArray(entry) && typeof entry[0] === 'string' && /^\d+-\d+$/.test(entry[0]) &&
    Array.isArray(entry[1]) && entry[1].every((field) => typeof field === 'string');
  if (!Array.isArray(entries) || !entries.every(valid)) throw new StoredDataError(`the packed output of run '${runId}' is not in fitq's format (${key})`);
  return entries;
}

/**
 * Reads entries after `afterId` ("0" for all), in pages: the packed ones
 * and the stream's. One round trip of plain reads, no MULTI (Redis refuses
 * every command of a MULTI while it is out of memory, reads included): the
 * packed log is read before and after the stream, so a log packed, or
 * unpacked, as it is read is still read whole (packing keeps entry ids).
 */
export async function readLogEntries(
  redis: Redis,
  keys: NamespaceKeys,
  runId: string,
  afterId = '0',
  count = 1000,
): Promise<LogEntry[]> {
  const packedKey = keys.runPackedLog(runId);
  const [packedBefore, stream, packedAfter] = (await execPipeline(
    redis.pipeline().get(packedKey).xrange(keys.runLog(runId), `(${afterId}`, '+', 'COUNT', count).get(packedKey),
  )) as [string | null, RawEntry[], string | null];
  const byId = new Map<string, RawEntry>();
  for (const packed of [packedBefore, packedAfter]) {
    if (packed !== null) for (const entry of unpack(packedKey, runId, packed)) if (isAfter(entry[0], afterId)) byId.set(entry[0], entry);
  }
  for (const entry of stream) byId.set(entry[0], entry);
  const entries = [...byId.values()].sort(([a], [b]) => (isAfter(a, b) ? 1 : isAfter(b, a) ? -1 : 0));
  return entries.slice(0, count).map(([id, flat]) => parseLogEntry(id, flat));
}

/** The id of the last entry of the queue's event stream ("0-0" if it has none): where waitLogEntries starts. */
export async function lastEventId(redis: Redis, keys: NamespaceKeys): Promise<string> {
  const [last] = await redis.xrevrange(keys.queue.key('events'), '+', '-', 'COUNT', 1);
  return last?.[0] ?? '0-0';
}

export interface LogWait {
  /** Entries of the log stream after the given id. */
  entries: LogEntry[];
  /** The last event read from the queue's event stream: where to go on. */
  eventsAfter: string;
  /** Whether any of those events was the run's (it started, ended, was re-staged or removed). */
  runEvent: boolean;
}

/**
 * Waits up to `blockMs` for log entries after `afterId`, or for events of
 * the queue after `eventsAfter`: a run whose log is packed as it ends adds
 * nothing to its stream, but its end is an event. Needs a connection of its
 * own: XREAD BLOCK holds it.
 */
export async function waitLogEntries(
  redis: Redis,
  keys: NamespaceKeys,
  runId: string,
  afterId: string,
  eventsAfter: string,
  blockMs: number,
): Promise<LogWait> {
  const logKey = keys.runLog(runId);
  const reply = await redis.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', logKey, keys.queue.key('events'), afterId, eventsAfter);
  const wait: LogWait = { entries: [], eventsAfter, runEvent: false };
  for (const [key, entries] of reply ?? []) {
    if (key === logKey) {
      wait.entries = entries.map(([id, flat]) => parseLogEntry(id, flat));
      continue;
    }
    for (const [id, flat] of entries) {
      wait.eventsAfter = id;
      for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === 'jobId' && flat[i + 1] === runId) wait.runEvent = true;
    }
  }
  return wait;
}
