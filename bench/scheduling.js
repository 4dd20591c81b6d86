// Scheduling quality: a generated GPU sweep of mixed demands run by two CLI
// workers (`bin/run.js worker`, as users start them), under `--policy
// backfill` and `--policy fifo`, and under backfill again with each run
// staged with a time limit of 1.5× its true duration (so a later run may
// use what a blocked head holds when it ends before the head could start).
// Reports each makespan (first run start to last run end, from the run
// records) against a lower bound no schedule can beat: max(longest run, for
// each resource the sum of demand × duration over the total capacity).
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { FitqClient } from '../dist/index.js';

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const RUNS = 60;
const SEED = 0x5eed_9a;
const WORKERS = 2;
const CAPACITY = { gpu: 4, mem: 64 };
const GPU_CHOICES = [1, 1, 1, 2, 4];
const MEM_RANGE = [4, 32];
const DURATION_RANGE_S = [0.3, 2.0];
/** Time limit of each run in the time-limited variant, as a multiple of its true duration. */
const LIMIT_FACTOR = 1.5;

/** Deterministic PRNG (mulberry32), so the workload is the same every time. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The workload, in staging order: { gpu, mem, seconds }. */
export function sweepWorkload(count = RUNS, seed = SEED) {
  const random = prng(seed);
  return Array.from({ length: count }, () => ({
    gpu: GPU_CHOICES[Math.floor(random() * GPU_CHOICES.length)],
    mem: MEM_RANGE[0] + Math.floor(random() * (MEM_RANGE[1] - MEM_RANGE[0] + 1)),
    seconds: Math.round((DURATION_RANGE_S[0] + random() * (DURATION_RANGE_S[1] - DURATION_RANGE_S[0])) * 10) / 10,
  }));
}

/** max(longest run, max over resources of Σ demand × duration / total capacity), in ms. */
export function lowerBoundMs(workload) {
  const longest = Math.max(...workload.map((run) => run.seconds));
  const byResource = Object.keys(CAPACITY).map(
    (name) => workload.reduce((sum, run) => sum + run[name] * run.seconds, 0) / (CAPACITY[name] * WORKERS),
  );
  return Math.max(longest, ...byResource) * 1000;
}

/**
 * Stages the workload, runs it with two CLI workers under `policy`; returns
 * the makespan and the mean time each run's record spans beyond its sleep
 * (claim to recorded end: hand-over, process start, recording), in ms.
 */
async function makespanMs(redisUrl, queue, workload, policy, limited = false) {
  const client = await FitqClient.connect({ redisUrl, queue });
  try {
    await client.stage(
      workload.map((run) => ({
        command: ['sleep', String(run.seconds)],
        resources: `gpu=${run.gpu} mem=${run.mem}`,
        ...(limited ? { timeLimit: Math.round(run.seconds * LIMIT_FACTOR * 1000) } : {}),
      })),
    );
    const resources = Object.entries(CAPACITY).map(([name, amount]) => `${name}=${amount}`).join(' ');
    // --concurrency 0: the runs' demands are the only limit (the default is one run per CPU core).
    const workers = Array.from({ length: WORKERS }, (_, i) =>
      execa('node', [BIN, 'worker', '-r', resources, '--name', `sched${i}`, '--policy', policy, '--concurrency', '0', '--run-once', '--log-format', 'json'], {
        env: { FITQ_REDIS_URL: redisUrl, FITQ_QUEUE: queue },
      }),
    );
    await Promise.all(workers);
    const runs = await client.listRuns();
    const unfinished = runs.filter((run) => run.status !== 'completed');
    if (unfinished.length > 0) throw new Error(`${unfinished.length} runs did not complete, e.g. ${JSON.stringify(unfinished[0])}`);
    const makespan = Math.max(...runs.map((run) => run.endedAt)) - Math.min(...runs.map((run) => run.startedAt));
    const seconds = new Map(runs.map((run) => [run.id, Number(run.command[1])]));
    const overhead = runs.reduce((sum, run) => sum + run.endedAt - run.startedAt - seconds.get(run.id) * 1000, 0) / runs.length;
    return { makespan, overhead };
  } finally {
    await client.close();
  }
}

/**
 * Makespan / lower bound (and per-run overhead) for backfill, backfill with
 * time limits of LIMIT_FACTOR × each run's duration, and fifo, on the same
 * workload.
 */
export async function schedulingQuality(redisUrl, newQueue) {
  const workload = sweepWorkload();
  const bound = lowerBoundMs(workload);
  // The same runs staged longest first: a reordering, for what it gains (see bench/scheduling-bounds.js).
  const longestFirst = [...workload].sort((a, b) => b.seconds - a.seconds);
  const results = [];
  for (const [policy, limited, order] of [['backfill', false, workload], ['backfill', true, workload], ['backfill', true, longestFirst], ['fifo', false, workload]]) {
    const sorted = order !== workload;
    results.push({ policy, limited, sorted, ...(await makespanMs(redisUrl, newQueue(), order, policy, limited)), bound });
  }
  return { runs: workload.length, limitFactor: LIMIT_FACTOR, results };
}
