// Listing runs against the number of runs: `fitq runs` and `fitq runs
// --json` (its first page), as users run them (the CLI, spawn to exit), and
// a `fitq dashboard`'s runs page and overview (HTTP GET, after one GET of
// each to warm up, each past the few seconds the dashboard keeps a view
// unchanged, so every GET reads Redis), each with
// 100,000 staged runs (one shape) against the same with 100 staged, in the
// same run, and with 100,000 staged over 20,000 shapes, 1,000 of them
// arrays of 80 runs. Redis's SLOWLOG records every command meanwhile (as in
// bench/worker-claims.js), to report the longest call each made: while one
// script runs, Redis serves nobody else.
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { FitqClient } from '../dist/index.js';

const RUNS = Number(process.env.BENCH_LISTING_RUNS ?? 100_000);
const BASELINE_RUNS = 100;
/** The spread case: SHAPES shapes, ARRAYS of them arrays of ARRAY_RUNS runs, the other shapes sharing the rest of RUNS. */
const SHAPES = 20_000;
const ARRAYS = 1_000;
const ARRAY_RUNS = 80;
/** Rounds per case (the median is reported, and the longest call of any round). */
const ROUNDS = 3;
/** Longer than the dashboard keeps a view (fragment-cache.ts, MAX_AGE_MS). */
const VIEW_KEPT_MS = 3100;
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
/** The bench's own commands, left out of what was measured. */
const OWN_COMMANDS = new Set(['SLOWLOG', 'CONFIG']);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The longest command Redis logged since the last reset, but the bench's own: {micros, command}. */
async function longestCall(redis) {
  const entries = await redis.call('SLOWLOG', 'GET', '-1');
  let longest = { micros: 0, command: '' };
  for (const [, , micros, args] of entries) {
    const command = String(args[0]).toUpperCase();
    if (!OWN_COMMANDS.has(command) && Number(micros) > longest.micros) longest = { micros: Number(micros), command };
  }
  return longest;
}

/** Times `action` (ms), with the longest Redis call it made. */
async function timed(redis, action) {
  await redis.call('SLOWLOG', 'RESET');
  const start = performance.now();
  await action();
  const ms = performance.now() - start;
  return { ms, longest: await longestCall(redis) };
}

/** ROUNDS of `action`: the median time (less `waitMs`, a wait it begins with) and the longest Redis call of any. */
async function rounds(redis, action, waitMs = 0) {
  const times = [];
  let longest = { micros: 0, command: '' };
  for (let i = 0; i < ROUNDS; i++) {
    const round = await timed(redis, action);
    times.push(round.ms - waitMs);
    if (round.longest.micros > longest.micros) longest = round.longest;
  }
  return { ms: median(times), longest };
}

/** A `fitq dashboard` on a free port, serving `queue`. */
async function startDashboard(env) {
  const child = execa('node', [BIN, 'dashboard', '--port', '0'], { env, stdin: 'ignore', buffer: false, reject: false });
  let stdout = '';
  const origin = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk.toString();
      const match = /fitq dashboard on (http:\/\/\S+?)\/? /.exec(stdout);
      if (match) resolve(match[1]);
    });
    void child.then((result) => reject(new Error(`fitq dashboard exited (${result.exitCode}): ${result.stderr ?? ''}`)));
  });
  return { origin, stop: () => child.kill('SIGTERM') };
}

async function get(url) {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return response.text();
}

/** Stages RUNS runs over SHAPES shapes (`cpu=1`, `cpu=2`, …), the first ARRAYS of them arrays of ARRAY_RUNS runs, 500 requests per call. */
async function stageSpread(client) {
  const rest = RUNS - ARRAYS * ARRAY_RUNS;
  const others = SHAPES - ARRAYS;
  const requests = Array.from({ length: SHAPES }, (_, i) =>
    i < ARRAYS
      ? { command: ['echo', '{index}'], resources: `cpu=${i + 1}`, array: { indices: Array.from({ length: ARRAY_RUNS }, (_, j) => j) } }
      : { command: ['true'], resources: `cpu=${i + 1}`, repeat: Math.floor(rest / others) + (i - ARRAYS < rest % others ? 1 : 0) });
  for (let i = 0; i < requests.length; i += 500) await client.stage(requests.slice(i, i + 500));
}

/** One namespace of `runs` staged runs (`spread`: over SHAPES shapes and ARRAYS arrays): each listing timed. */
async function listingCase(url, queue, runs, spread = false) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  const { redis } = client;
  try {
    if (spread) await stageSpread(client);
    else await client.stage({ command: ['true'], resources: 'cpu=1', repeat: runs });
    const env = { ...process.env, FITQ_REDIS_URL: url, FITQ_QUEUE: queue };
    const cli = (args) =>
      rounds(redis, async () => {
        const result = await execa('node', [BIN, ...args], { env, reject: false });
        if (result.exitCode !== 0) throw new Error(`fitq ${args.join(' ')}: ${result.stderr}`);
      });
    const table = await cli(['runs']);
    const json = await cli(['runs', '--json']);
    const dashboard = await startDashboard(env);
    try {
      const page = (path) => async () => {
        await new Promise((resolve) => setTimeout(resolve, VIEW_KEPT_MS));
        await get(`${dashboard.origin}${path}`);
      };
      await get(`${dashboard.origin}/runs`);
      await get(`${dashboard.origin}/`);
      const runsPage = await rounds(redis, page('/runs'), VIEW_KEPT_MS);
      const overview = await rounds(redis, page('/'), VIEW_KEPT_MS);
      return { table, json, runsPage, overview };
    } finally {
      dashboard.stop();
    }
  } finally {
    await client.redis.flushdb();
    await client.close();
  }
}

/** The cases with RUNS staged (in one shape, and spread), and with BASELINE_RUNS staged, on the Redis at `url`. */
export async function listing(url, newQueue) {
  const admin = await FitqClient.connect({ redisUrl: url, queue: newQueue() });
  await admin.redis.config('SET', 'slowlog-log-slower-than', '0');
  await admin.redis.config('SET', 'slowlog-max-len', '1000000');
  try {
    const few = await listingCase(url, newQueue(), BASELINE_RUNS);
    const many = await listingCase(url, newQueue(), RUNS);
    const spread = await listingCase(url, newQueue(), RUNS, true);
    return { runs: RUNS, baselineRuns: BASELINE_RUNS, shapes: SHAPES, arrays: ARRAYS, few, many, spread };
  } finally {
    await admin.redis.config('SET', 'slowlog-log-slower-than', '10000');
    await admin.close();
  }
}
