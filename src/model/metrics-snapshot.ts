/**
 * What readMetrics-*.lua replies, as typed values: one namespace at one
 * moment (runs by status, staged runs by shape, workers, pool) and the run
 * statistics the scripts keep (includes/runTimeBounds.lua).
 */
import { parseStoredResources, type Resources } from '../resources/spec.js';
import { decodeRunUsage, type RunUsage } from './run-usage.js';
import { parseJson } from './run-codec.js';
import { decodeDeviceReading, type DeviceReading } from '../gpu/device-reading.js';
import { parseDecimal } from '../resources/amount.js';

/** Non-cumulative bucket counts of one histogram: counts[i] for bounds[i] (ms), the last for longer. */
export interface RunTimeBuckets {
  boundsMs: readonly number[];
  counts: number[];
  sumMs: number;
}

export interface WorkerSnapshot {
  name: string;
  host: string;
  heartbeatAt: number;
  /** Its lease holds (false: lapsed, not reaped yet). */
  alive: boolean;
  drained: boolean;
  /** It holds resources for a blocked head. */
  holding: boolean;
  running: number;
  /** Most runs at once; 0 = no limit. */
  concurrency: number;
  /** Amounts in micros, exact (as Redis holds them). */
  capacity: Map<string, bigint>;
  free: Map<string, bigint>;
  /** GPU device index -> free share in micros (1,000,000 = whole device). */
  devices: Map<string, bigint>;
  /** Its GPU probe's last reading, by device index (a worker that probes). */
  gpus: Map<string, DeviceReading>;
  /** Its running runs: what each one's claim reserved (micros), and what it used so far, if it was measured yet. */
  runs: RunningRunSnapshot[];
}

export interface RunningRunSnapshot {
  id: string;
  reserved: Resources;
  usage: RunUsage | undefined;
  /** Who staged it ('' when not recorded). */
  user: string;
}

export interface MetricsSnapshot {
  /** The Redis server's clock, epoch ms. */
  now: number;
  paused: boolean;
  /** fitq status (staged, held, running, completed, failed, ...) -> runs stored with it. */
  runs: Map<string, number>;
  /** Demand shape -> staged runs in its fit index, for the shapes read (at most the number asked for: see stagedShapes.lua). */
  shapes: Map<string, number>;
  /** Staged runs in the whole fit index, of every shape (read or not). */
  stagedTotal: number;
  workers: WorkerSnapshot[];
  /** Amounts in micros. */
  pool: { capacity: Map<string, bigint>; used: Map<string, bigint> };
  /** Status -> runs that ended so, ever (since the namespace was last emptied). */
  ended: Map<string, number>;
  /** Cause (worker, retry) -> runs fitq staged again. */
  restaged: Map<string, number>;
  /** Staged to first start. */
  wait: RunTimeBuckets;
  /** Ended status -> how long runs that ended so had run. */
  durations: Map<string, RunTimeBuckets>;
}

function pairs(flat: unknown): [string, string][] {
  const list = (flat ?? []) as unknown[];
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([String(list[i]), String(list[i + 1])]);
  return out;
}

function numbers(flat: unknown): Map<string, number> {
  return new Map(pairs(flat).map(([name, value]) => [name, Number(value)]));
}

/** A hash of decimal amounts as micros; a value fitq never writes (by hand) is left out. */
function amounts(flat: unknown): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const [name, value] of pairs(flat)) {
    try {
      out.set(name, parseDecimal(value));
    } catch {
      // not an amount
    }
  }
  return out;
}

function emptyBuckets(boundsMs: readonly number[]): RunTimeBuckets {
  return { boundsMs, counts: new Array<number>(boundsMs.length + 1).fill(0), sumMs: 0 };
}

/** Adds one stats field (`wait:3`, `wait:sum`) to its buckets; false if the field is no bucket of them. */
function addBucket(buckets: RunTimeBuckets, field: string, value: number): boolean {
  if (field === 'sum') {
    buckets.sumMs += value;
    return true;
  }
  const index = Number(field) - 1;
  if (!Number.isInteger(index) || index < 0 || index >= buckets.counts.length) return false;
  buckets.counts[index]! += value;
  return true;
}

/** What countRunStatuses-*.lua replies: runs by status among the members read, and how many it read. */
export function parseStatusCountsReply(reply: unknown): { counts: Map<string, number>; read: number } {
  const [counts, read] = reply as [unknown, unknown];
  return { counts: numbers(counts), read: Number(read) };
}

export function parseMetricsReply(reply: unknown): MetricsSnapshot {
  const [now, paused, statuses, shapes, workers, poolCapacity, poolUsed, stats, waitBounds, durationBounds, stagedTotal] = reply as unknown[];
  const waitBoundsMs = (waitBounds as unknown[]).map(Number);
  const durationBoundsMs = (durationBounds as unknown[]).map(Number);
  const snapshot: MetricsSnapshot = {
    now: Number(now),
    paused: Number(paused) === 1,
    runs: numbers(statuses),
    shapes: numbers(shapes),
    stagedTotal: Number(stagedTotal ?? 0),
    workers: (workers as unknown[][]).map((entry) => ({
      name: String(entry[0]),
      host: String(entry[1]),
      heartbeatAt: Number(entry[2]),
      alive: Number(entry[3]) === 1,
      drained: Number(entry[4]) === 1,
      holding: Number(entry[5]) === 1,
      running: Number(entry[6]),
      concurrency: Number(entry[7]),
      capacity: amounts(entry[8]),
      free: amounts(entry[9]),
      devices: amounts(entry[10]),
      gpus: readingsOf(entry[11]),
      runs: runningRunsOf(entry[12]),
    })),
    pool: { capacity: amounts(poolCapacity), used: amounts(poolUsed) },
    ended: new Map(),
    restaged: new Map(),
    wait: emptyBuckets(waitBoundsMs),
    durations: new Map(),
  };
  for (const [field, text] of pairs(stats)) {
    const value = Number(text);
    const [kind = '', first = '', second] = field.split(':');
    if (kind === 'ended' && second === undefined) snapshot.ended.set(first, value);
    else if (kind === 'restaged' && second === undefined) snapshot.restaged.set(first, value);
    else if (kind === 'wait' && second === undefined) addBucket(snapshot.wait, first, value);
    else if (kind === 'duration' && second !== undefined) {
      let buckets = snapshot.durations.get(first);
      if (!buckets) snapshot.durations.set(first, (buckets = emptyBuckets(durationBoundsMs)));
      addBucket(buckets, second, value);
    }
  }
  return snapshot;
}

/** A worker's gpus hash (flat, as HGETALL gives it): device index -> reading; `at` and anything unreadable left out. */
function readingsOf(flat: unknown): Map<string, DeviceReading> {
  const readings = new Map<string, DeviceReading>();
  const list = Array.isArray(flat) ? flat.map(String) : [];
  for (let i = 0; i + 1 < list.length; i += 2) {
    const reading = /^\d+$/.test(list[i]!) ? decodeDeviceReading(list[i + 1]) : undefined;
    if (reading) readings.set(list[i]!, reading);
  }
  return readings;
}

/** A worker's running runs, flat as readMetrics gives them: id, reserved ("cpu=1 mem=500000000"), usage (JSON or ""), user. */
function runningRunsOf(flat: unknown): RunningRunSnapshot[] {
  const list = Array.isArray(flat) ? flat.map(String) : [];
  const runs: RunningRunSnapshot[] = [];
  for (let i = 0; i + 3 < list.length; i += 4) {
    let reserved: Resources;
    try {
      reserved = parseStoredResources(list[i + 1]);
    } catch {
      reserved = new Map(); // written by hand: nothing shown as booked
    }
    runs.push({ id: list[i]!, reserved, usage: decodeRunUsage(parseJson<unknown>(list[i + 2], undefined)), user: list[i + 3]! });
  }
  return runs;
}
