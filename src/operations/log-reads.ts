/**
 * Reads a run's output from Redis: its entries after a given one, packed
 * and streamed alike, and waits for new ones or for the run's events (see
 * model/logs.ts for how output is stored).
 */
import { StoredDataError } from '../errors.js';
import { isAfter, parseLogEntry, type LogEntry } from '../model/logs.js';
import { execPipeline } from '../redis/pipeline.js';
import type { ReadContext } from './context.js';

type RawEntry = [id: string, fields: string[]];

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
  { redis, keys }: ReadContext,
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
export async function lastEventId({ redis, keys }: ReadContext): Promise<string> {
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
  { redis, keys }: ReadContext,
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
