/**
 * Stress: nine real workers with small, different capacities share one Redis
 * and race for 520 real runs of mixed demand shapes and durations. No run may
 * start twice, and no worker's usage may ever exceed its capacity. Checked
 * live, from atomic snapshots of every worker's hashes in Redis, and
 * afterwards by a sweep line over the run records' startedAt/endedAt and over
 * the start/end timestamps the run processes printed themselves. Runs wait
 * at a gate until every worker holds some (one at least two, one a resource
 * fully in use), so the checks always see runs side by side, however slow
 * the machine; how many overlap beyond that is a matter of speed, printed,
 * not asserted (see bench/ for speed).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import type { StageRequest } from '../../src/model/stage.js';
import { formatMicros, parseDecimal } from '../../src/resources/amount.js';
import { formatResources, parseResourceSpec, type Resources } from '../../src/resources/spec.js';
import type { FitqWorker } from '../../src/worker/worker.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { prng } from '../support/prng.js';
import { waitFor } from '../support/wait.js';

const RUNS = 520;
const MAX_DURATION_MS = 160;
const SEED = 0x5eed_f17;
/** How long all runs may take to end (about 18 s on an idle 2-core box; generous for a loaded one). */
const COMPLETION_DEADLINE_MS = 100_000;

interface WorkerSpec {
  name: string;
  resources: string;
  /** 0 = no limit. */
  concurrency: number;
}

// Small capacities, some fractional, over a few resource names; some workers
// also limit how many runs they take at once.
const WORKERS: readonly WorkerSpec[] = [
  { name: 'w0', resources: 'cpu=2 mem=4', concurrency: 0 },
  { name: 'w1', resources: 'cpu=1.5 mem=2 lic=1', concurrency: 0 },
  { name: 'w2', resources: 'cpu=4', concurrency: 3 },
  { name: 'w3', resources: 'cpu=1 mem=1 lic=0.5', concurrency: 0 },
  { name: 'w4', resources: 'cpu=3 mem=8 lic=2', concurrency: 4 },
  { name: 'w5', resources: 'mem=3 lic=1.5', concurrency: 0 },
  { name: 'w6', resources: 'cpu=0.5 mem=0.5', concurrency: 0 },
  { name: 'w7', resources: 'gpu=1', concurrency: 2 },
  { name: 'w8', resources: 'cpu=2.5 mem=2.5 lic=1 gpu=0.5', concurrency: 0 },
];

// Demand shapes and how often each is drawn.
const SHAPES: readonly { spec: string; weight: number }[] = [
  { spec: '', weight: 3 },
  { spec: 'cpu=1', weight: 10 },
  { spec: 'cpu=0.5', weight: 10 },
  { spec: 'cpu=0.1', weight: 6 },
  { spec: 'cpu=0.25 mem=0.5', weight: 8 },
  { spec: 'cpu=1 mem=2', weight: 6 },
  { spec: 'cpu=2 mem=3', weight: 3 },
  { spec: 'mem=1', weight: 8 },
  { spec: 'mem=0.3 lic=0.25', weight: 6 },
  { spec: 'lic=0.5', weight: 6 },
  { spec: 'cpu=0.5 lic=1', weight: 5 },
  { spec: 'cpu=1.5 mem=1 lic=0.5', weight: 4 },
  { spec: 'gpu=0.5', weight: 4 },
  { spec: 'cpu=0.5 gpu=0.5', weight: 2 },
];

function fitsWithin(demands: Resources, available: Resources): boolean {
  return [...demands].every(([name, amount]) => amount <= (available.get(name) ?? -1n));
}

/** Exact amounts of a Redis hash of name -> decimal string. */
function hashAmounts(hash: Record<string, string>): Map<string, bigint> {
  return new Map(Object.entries(hash).map(([name, text]) => [name, parseDecimal(text)]));
}

function show(amounts: ReadonlyMap<string, bigint>): string {
  return [...amounts].map(([name, micros]) => `${name}=${formatMicros(micros)}`).join(' ') || '(none)';
}

interface PlannedRun {
  id: string;
  demands: Resources;
  durationMs: number;
}

interface Interval {
  id: string;
  start: number;
  end: number;
  demands: Resources;
}

interface SweepResult {
  violations: string[];
  /** Most runs at once. */
  peakRuns: number;
  /** Resources whose usage reached the capacity at some instant. */
  saturated: Set<string>;
  /** Pairs of runs that overlapped in time. */
  overlappingPairs: number;
}

/**
 * Sweeps over half-open intervals [start, end): at every start, the summed
 * demands of the runs under way must fit the capacity, and their number the
 * concurrency limit. At equal times ends go first, so back-to-back runs are
 * fine; empty intervals occupy no instant and are left out.
 */
function sweep(label: string, intervals: readonly Interval[], capacity: Resources, concurrency: number): SweepResult {
  const events: { t: number; delta: 1 | -1; interval: Interval }[] = [];
  for (const interval of intervals) {
    if (interval.end < interval.start) throw new Error(`${label}: run ${interval.id} ends before it starts`);
    if (interval.end === interval.start) continue;
    events.push({ t: interval.start, delta: 1, interval }, { t: interval.end, delta: -1, interval });
  }
  events.sort((a, b) => a.t - b.t || a.delta - b.delta);
  const usage = new Map<string, bigint>();
  const under = new Set<string>();
  const result: SweepResult = { violations: [], peakRuns: 0, saturated: new Set(), overlappingPairs: 0 };
  for (const { t, delta, interval } of events) {
    if (delta === -1) {
      under.delete(interval.id);
      for (const [name, amount] of interval.demands) usage.set(name, (usage.get(name) ?? 0n) - amount);
      continue;
    }
    result.overlappingPairs += under.size;
    under.add(interval.id);
    for (const [name, amount] of interval.demands) usage.set(name, (usage.get(name) ?? 0n) + amount);
    result.peakRuns = Math.max(result.peakRuns, under.size);
    if (concurrency > 0 && under.size > concurrency) {
      result.violations.push(`${label}: ${under.size} runs at ${t} (limit ${concurrency}): ${[...under].join(' ')}`);
    }
    for (const [name, used] of usage) {
      const total = capacity.get(name);
      if (total === undefined || used > total) {
        result.violations.push(
          `${label}: ${name}=${formatMicros(used)} in use at ${t}, capacity ${total === undefined ? 'none' : formatMicros(total)}: ${[...under].join(' ')}`,
        );
      } else if (used === total && used > 0n) {
        result.saturated.add(name);
      }
    }
  }
  return result;
}

interface SamplerStats {
  samples: number;
  /** Samples in which some run was under way. */
  busySamples: number;
  /** Samples in which some worker had some resource completely in use. */
  saturatedSamples: number;
  /** Most runs seen at once on one worker. */
  peakRuns: number;
  violations: string[];
}

/**
 * Reads every worker's info, capacity, free and runs in one MULTI (an atomic
 * snapshot) and checks: 0 <= free <= capacity, capacity - free is exactly the
 * sum of the demands of the runs the worker holds, the running count matches
 * and keeps to the concurrency limit, and no run is held by two workers (now,
 * or over all snapshots so far).
 */
async function sampleWorkers(
  client: FitqClient,
  capacities: ReadonlyMap<string, Resources>,
  demandsOf: ReadonlyMap<string, Resources>,
  holders: Map<string, string>,
  stats: SamplerStats,
): Promise<void> {
  const multi = client.redis.multi();
  for (const spec of WORKERS) {
    const keys = client.keys.worker(spec.name);
    multi.hgetall(keys.info).hgetall(keys.capacity).hgetall(keys.free).smembers(keys.runs);
  }
  const replies = (await multi.exec()) ?? [];
  stats.samples++;
  let busy = false;
  let saturated = false;
  const heldNow = new Map<string, string>();
  WORKERS.forEach((spec, index) => {
    const [info, capacityHash, freeHash, runs] = replies.slice(index * 4, index * 4 + 4).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [Record<string, string>, Record<string, string>, Record<string, string>, string[]];
    const fail = (message: string): void => void stats.violations.push(`sample ${stats.samples}, ${spec.name}: ${message}`);
    if (!info.token) return fail('worker is not registered');
    const capacity = capacities.get(spec.name)!;
    const stored = hashAmounts(capacityHash);
    if (show(stored) !== show(capacity)) fail(`capacity hash ${show(stored)}, expected ${show(capacity)}`);
    const free = hashAmounts(freeHash);
    for (const name of free.keys()) if (!capacity.has(name)) fail(`free has ${name}, which the worker does not have`);
    const used = new Map<string, bigint>();
    for (const id of runs) {
      const demands = demandsOf.get(id);
      if (!demands) {
        fail(`holds unknown run ${id}`);
        continue;
      }
      for (const [name, amount] of demands) used.set(name, (used.get(name) ?? 0n) + amount);
      const other = heldNow.get(id);
      if (other) fail(`run ${id} is held by ${other} too`);
      heldNow.set(id, spec.name);
      const before = holders.get(id);
      if (before !== undefined && before !== spec.name) fail(`run ${id} was held by ${before} before`);
      holders.set(id, spec.name);
    }
    for (const name of used.keys()) if (!capacity.has(name)) fail(`runs use ${name}, which the worker does not have`);
    for (const [name, total] of capacity) {
      const left = free.get(name);
      if (left === undefined) {
        fail(`no free amount of ${name}`);
        continue;
      }
      if (left < 0n) fail(`free ${name}=${formatMicros(left)} is negative`);
      if (left > total) fail(`free ${name}=${formatMicros(left)} exceeds capacity ${formatMicros(total)}`);
      const inUse = used.get(name) ?? 0n;
      if (total - left !== inUse) {
        fail(`${name}: capacity - free = ${formatMicros(total - left)}, but its runs (${runs.join(' ')}) demand ${formatMicros(inUse)}`);
      }
      if (left === 0n) saturated = true;
    }
    if (Number(info.running) !== runs.length) fail(`running=${info.running}, but it holds ${runs.length} runs`);
    if (spec.concurrency > 0 && runs.length > spec.concurrency) fail(`holds ${runs.length} runs, limit ${spec.concurrency}`);
    if (runs.length > 0) busy = true;
    stats.peakRuns = Math.max(stats.peakRuns, runs.length);
  });
  if (busy) stats.busySamples++;
  if (saturated) stats.saturatedSamples++;
}

/** Status of each run, in one round trip. */
async function readStatuses(client: FitqClient, ids: readonly string[]): Promise<string[]> {
  const pipeline = client.redis.pipeline();
  for (const id of ids) pipeline.hget(client.keys.run(id), 'status');
  return ((await pipeline.exec()) ?? []).map(([, status]) => String(status));
}

const ENDED = new Set(['completed', 'failed', 'canceled', 'lost']);

describe('claiming under stress', () => {
  it(
    `${WORKERS.length} workers, ${RUNS} runs of mixed shapes: no run starts twice, no worker ever exceeds its capacity`,
    async () => {
      const queue = newQueue();
      const dir = mkdtempSync(join(tmpdir(), 'fitq-stress-'));
      const startsFile = join(dir, 'starts');
      const gate = join(dir, 'go');
      try {
        const client = await connectClient(queue);
        const sampler = await connectClient(queue);

        // --- Workers ---------------------------------------------------------
        const capacities = new Map(WORKERS.map((spec) => [spec.name, parseResourceSpec(spec.resources)]));
        const started: { spec: WorkerSpec; worker: FitqWorker; logs: Record<string, unknown>[] }[] = [];
        for (const spec of WORKERS) {
          const { worker, logs } = await startTestWorker(queue, {
            name: spec.name,
            resources: spec.resources,
            concurrency: spec.concurrency,
            // The test is about claims, not leases: beside two other files whose scripts hold the
            // shared Redis for seconds at a time, the default 30 s lapsed (workers reaped mid-test).
            leaseMs: 120_000,
          });
          started.push({ spec, worker, logs });
        }

        // --- Workload --------------------------------------------------------
        const random = prng(SEED);
        const totalWeight = SHAPES.reduce((sum, shape) => sum + shape.weight, 0);
        const pickShape = (): string => {
          let r = random() * totalWeight;
          for (const shape of SHAPES) if ((r -= shape.weight) < 0) return shape.spec;
          return SHAPES[SHAPES.length - 1]!.spec;
        };
        for (const shape of SHAPES) {
          const demands = parseResourceSpec(shape.spec);
          expect([...capacities.values()].some((capacity) => fitsWithin(demands, capacity)), `shape '${shape.spec}' fits some worker`).toBe(true);
        }
        const planned: PlannedRun[] = [];
        const requests: StageRequest[] = [];
        for (let i = 0; i < RUNS; i++) {
          const spec = pickShape();
          const durationMs = Math.floor(random() * (MAX_DURATION_MS + 1));
          const id = `s${String(i).padStart(4, '0')}`;
          planned.push({ id, demands: parseResourceSpec(spec), durationMs });
          const script = [
            `echo "start $(date +%s%3N) $FITQ_RUN_ID $FITQ_WORKER";`,
            `echo "$FITQ_RUN_ID" >> '${startsFile}';`,
            // (Polled five times a second: the runs at the gate, 20 or more, forking sleep 50 times a second
            // each loaded a 2-core machine enough to starve the other test files' processes.)
            `while [ ! -e '${gate}' ]; do sleep 0.2; done;`,
            `sleep ${(durationMs / 1000).toFixed(3)};`,
            `echo "end $(date +%s%3N) $FITQ_RUN_ID"`,
          ].join(' ');
          const priority = [0, 0, 0, 1, -1][Math.floor(random() * 5)]!;
          requests.push({ command: [script], shell: true, runId: id, resources: spec, priority });
        }
        const demandsOf = new Map(planned.map((run) => [run.id, run.demands]));
        const shapesUsed = new Set(planned.map((run) => formatResources(run.demands)));
        expect(shapesUsed.size).toBe(SHAPES.length);

        // --- Sample Redis while the runs go ----------------------------------
        const stats: SamplerStats = { samples: 0, busySamples: 0, saturatedSamples: 0, peakRuns: 0, violations: [] };
        const holders = new Map<string, string>();
        let finished = false;
        const sampling = (async () => {
          while (!finished && stats.violations.length < 20) {
            await sampleWorkers(sampler, capacities, demandsOf, holders, stats);
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        })();

        // --- Stage everything in one batch and wait for the end --------------
        const t0 = Date.now();
        const staged = await client.stage(requests);
        expect(staged.runs).toHaveLength(RUNS);
        expect(staged.warnings).toEqual([]);
        const ids = planned.map((run) => run.id);
        // Nothing ends before the gate opens: wait until the runs are side by side, then take a snapshot of it.
        const sideBySide = async () => {
          const held = await Promise.all(
            WORKERS.map(async (spec) => {
              const keys = client.keys.worker(spec.name);
              const [runs, free] = await Promise.all([client.redis.smembers(keys.runs), client.redis.hgetall(keys.free)]);
              return { runs: runs.length, full: Object.values(free).some((amount) => parseDecimal(amount) === 0n) };
            }),
          );
          return held.every((worker) => worker.runs >= 1) && held.some((worker) => worker.runs >= 2) && held.some((worker) => worker.full);
        };
        await waitFor('every worker to hold runs at the gate, one at least two, one a resource fully in use', sideBySide, 60_000);
        await sampleWorkers(sampler, capacities, demandsOf, holders, stats);
        writeFileSync(gate, '');
        let statuses = await readStatuses(client, ids);
        while (!statuses.every((status) => ENDED.has(status)) && Date.now() - t0 < COMPLETION_DEADLINE_MS && stats.violations.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          statuses = await readStatuses(client, ids);
        }
        const elapsedMs = Date.now() - t0;
        // One last snapshot after the end, then stop sampling.
        finished = true;
        await sampling;
        await sampleWorkers(sampler, capacities, demandsOf, holders, stats);
        expect(stats.violations, 'violations seen in Redis snapshots').toEqual([]);
        const counts = statuses.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
        expect(counts, `statuses after ${elapsedMs} ms`).toEqual({ completed: RUNS });

        // --- Redis after the end: everything released -------------------------
        const workers = await client.listWorkers();
        expect(workers.map((w) => w.name).sort()).toEqual(WORKERS.map((w) => w.name).sort());
        for (const worker of workers) {
          expect(show(worker.free), `${worker.name} free after the end`).toBe(show(capacities.get(worker.name)!));
          expect(show(worker.capacity), `${worker.name} capacity`).toBe(show(capacities.get(worker.name)!));
          expect(worker.runs, `${worker.name} runs after the end`).toEqual([]);
        }

        // --- Each run started exactly once ------------------------------------
        const startLines = readFileSync(startsFile, 'utf8').split('\n').filter((line) => line !== '');
        const startCounts = new Map<string, number>();
        for (const id of startLines) startCounts.set(id, (startCounts.get(id) ?? 0) + 1);
        const twice = [...startCounts].filter(([, n]) => n > 1);
        expect(twice, 'runs whose process started more than once').toEqual([]);
        expect(ids.filter((id) => !startCounts.has(id)), 'runs whose process never started').toEqual([]);
        expect(startLines).toHaveLength(RUNS);

        const records = new Map<string, RunRecord>((await client.listRuns()).map((run) => [run.id, run]));
        expect(records.size).toBe(RUNS);
        for (const id of ids) {
          const run = records.get(id)!;
          expect(run.status, id).toBe('completed');
          expect(run.exitCode, id).toBe(0);
          expect(run.epoch, `${id} claimed once`).toBe(1);
          expect(run.worker, id).toBeDefined();
          expect(capacities.has(run.worker!), `${id} ran on a known worker`).toBe(true);
          expect(run.startedAt, id).toBeTypeOf('number');
          expect(run.endedAt, id).toBeTypeOf('number');
          // The snapshots only ever saw the run on the worker it is recorded on.
          if (holders.has(id)) expect(holders.get(id), `${id} holder`).toBe(run.worker);
        }

        // Worker logs: each run scheduled and started once, by its own worker; nothing went wrong.
        const scheduledBy = new Map<string, string[]>();
        const startedBy = new Map<string, string[]>();
        for (const { spec, logs } of started) {
          for (const entry of logs) {
            const msg = String(entry.msg);
            expect(Number(entry.level), `${spec.name}: ${msg}`).toBeLessThan(40); // no warn/error
            const runId = typeof entry.runId === 'string' ? entry.runId : undefined;
            if (!runId) continue;
            if (msg.startsWith(`Scheduling run ${runId}`)) scheduledBy.set(runId, [...(scheduledBy.get(runId) ?? []), spec.name]);
            if (msg === `Run ${runId} started`) startedBy.set(runId, [...(startedBy.get(runId) ?? []), spec.name]);
          }
        }
        for (const id of ids) {
          const worker = records.get(id)!.worker!;
          expect(scheduledBy.get(id), `${id} scheduled`).toEqual([worker]);
          expect(startedBy.get(id), `${id} started`).toEqual([worker]);
        }

        // --- The runs' own timestamps, from their logs -------------------------
        const processTimes = new Map<string, { start: number; end: number }>();
        for (const id of ids) {
          const record = records.get(id)!;
          const entries = await client.readLog(id);
          const lines = entries.flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
          const starts = lines.filter((line) => line.startsWith('start '));
          const ends = lines.filter((line) => line.startsWith('end '));
          expect(starts, `${id} start lines`).toHaveLength(1);
          expect(ends, `${id} end lines`).toHaveLength(1);
          expect(entries.at(-1), `${id} log ends with the end marker`).toMatchObject({ kind: 'end', status: 'completed' });
          const [, startText, startId, startWorker] = starts[0]!.split(' ');
          const [, endText, endId] = ends[0]!.split(' ');
          expect([startId, endId, startWorker], `${id} stamps`).toEqual([id, id, record.worker]);
          const start = Number(startText);
          const end = Number(endText);
          expect(Number.isInteger(start) && Number.isInteger(end), `${id} stamps are integers`).toBe(true);
          // The process ran inside its reservation.
          expect(record.startedAt!, `${id} claimed before its process started`).toBeLessThanOrEqual(start);
          expect(start, `${id} process start <= end`).toBeLessThanOrEqual(end);
          expect(end, `${id} released after its process ended`).toBeLessThanOrEqual(record.endedAt!);
          processTimes.set(id, { start, end });
        }

        // --- Sweep lines per worker ---------------------------------------------
        const violations: string[] = [];
        const perWorker: Record<string, unknown>[] = [];
        let overlappingPairs = 0;
        let recordOverlappingPairs = 0;
        let peakRuns = 0;
        let recordPeakRuns = 0;
        const saturated: string[] = [];
        for (const spec of WORKERS) {
          const capacity = capacities.get(spec.name)!;
          const mine = ids.filter((id) => records.get(id)!.worker === spec.name);
          const fromRecords = sweep(
            `${spec.name} (records)`,
            mine.map((id) => ({ id, start: records.get(id)!.startedAt!, end: records.get(id)!.endedAt!, demands: demandsOf.get(id)! })),
            capacity,
            spec.concurrency,
          );
          const fromProcesses = sweep(
            `${spec.name} (process stamps)`,
            mine.map((id) => ({ id, ...processTimes.get(id)!, demands: demandsOf.get(id)! })),
            capacity,
            spec.concurrency,
          );
          violations.push(...fromRecords.violations, ...fromProcesses.violations);
          overlappingPairs += fromProcesses.overlappingPairs;
          recordOverlappingPairs += fromRecords.overlappingPairs;
          peakRuns = Math.max(peakRuns, fromProcesses.peakRuns);
          recordPeakRuns = Math.max(recordPeakRuns, fromRecords.peakRuns);
          for (const name of fromRecords.saturated) saturated.push(`${spec.name}:${name}`);
          perWorker.push({
            worker: spec.name,
            runs: mine.length,
            peakRuns: fromProcesses.peakRuns,
            overlaps: fromProcesses.overlappingPairs,
            saturated: [...fromRecords.saturated].join(','),
          });
        }
        expect(violations, 'capacity or concurrency exceeded').toEqual([]);

        // --- The checks saw contention: what the gate guarantees -------------------
        for (const entry of perWorker) expect(entry.runs as number, `${String(entry.worker)} ran something`).toBeGreaterThan(0);
        expect(recordOverlappingPairs, 'reservations that overlapped on the same worker').toBeGreaterThanOrEqual(1);
        expect(overlappingPairs, 'processes that overlapped on the same worker').toBeGreaterThanOrEqual(1);
        expect(recordPeakRuns, 'most reservations at once on one worker').toBeGreaterThanOrEqual(2);
        expect(peakRuns, 'most processes at once on one worker').toBeGreaterThanOrEqual(2);
        expect(saturated.length, 'worker resources that were fully in use at some instant').toBeGreaterThanOrEqual(1);
        expect(stats.busySamples, 'snapshots with runs under way').toBeGreaterThanOrEqual(1);
        expect(stats.saturatedSamples, 'snapshots with a resource fully in use').toBeGreaterThan(0);

        console.info(
          JSON.stringify({
            runs: RUNS,
            workers: WORKERS.length,
            elapsedMs,
            samples: stats.samples,
            busySamples: stats.busySamples,
            saturatedSamples: stats.saturatedSamples,
            samplerPeakRuns: stats.peakRuns,
            overlappingPairs,
            recordOverlappingPairs,
            peakRuns,
            recordPeakRuns,
            saturated,
            perWorker,
          }),
        );

        await Promise.all(started.map(({ worker }) => worker.stop()));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    150_000,
  );
});
