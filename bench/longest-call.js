// The longest script call as the queue grows: while one script runs, Redis
// serves nobody else, so no call should grow with the queue. The same
// scenario runs twice in one Redis, on a large namespace (100,000 staged
// runs over 20,000 demand shapes, 1,000 arrays among them) and on a small one
// (100 runs, one shape, one array), each staged through the library as
// bench/metrics-scrape.js does. Then what users do, as they do it: `fitq
// stage`, a real CLI `fitq worker --run-once` running 20 runs, a worker
// polling idle (the library's, polling every 100 ms, as the CLI's does every
// 5 s), `fitq runs`, `fitq workers`, `fitq hold`/`release`/`cancel`/`restart`
// of an array (of 5,000 runs in the large namespace, 20 in the small), the
// /metrics read and `fitq runs clean`. Redis's SLOWLOG,
// set to record every command, gives each call's time inside Redis:
// reported per script (calls, p50, p99, longest) and per step (its longest
// call), large against small. On a busy machine a single call's time
// includes whatever Redis waited for the CPU meanwhile: compare p50s, and
// the small namespace's longest calls, which show what noise alone does.
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { FitqClient, startWorker } from '../dist/index.js';
import { luaScripts } from '../dist/queue/lua-source.js';
import { renderNamespaceMetrics } from '../dist/metrics/namespace.js';

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const silent = pino({ level: 'silent' });

/**
 * The two namespaces: staged runs, demand shapes (`x=1` … `x=N`: no worker
 * here has `x`), arrays: the first of `bigArray` runs (what hold, release,
 * cancel and restart act on: a command over many runs goes in parts), the
 * others of ARRAY_RUNS.
 */
export const SIZES = [
  {
    name: 'large', runs: Number(process.env.BENCH_LONGEST_RUNS ?? 100_000), shapes: Number(process.env.BENCH_LONGEST_SHAPES ?? 20_000),
    arrays: Number(process.env.BENCH_LONGEST_ARRAYS ?? 1000), bigArray: 5000,
  },
  { name: 'small', runs: 100, shapes: 1, arrays: 1, bigArray: 20 },
];
const ARRAY_RUNS = 20;
/** Runs of `true` the CLI worker runs (cpu=1: the only runs it fits). */
const RUNNABLE = 20;
/** How long the idle worker polls, and how often. */
const IDLE_MS = 1500;
const IDLE_POLL_MS = 100;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
const OWN_COMMANDS = new Set(['SLOWLOG', 'CONFIG']);

/**
 * Names a logged call: a script by its SHA; a script sent in full (EVAL,
 * the first call of it on a connection: Redis logs its text cut to 128
 * bytes, alike for every fitq script) by the scripts with its number of
 * keys; any other command with its key, past the namespace's prefix.
 */
function callName(command, args, scripts) {
  if (command.startsWith('EVALSHA')) return scripts.bySha.get(String(args[1] ?? '')) ?? command;
  if (command.startsWith('EVAL')) return `${command} ${scripts.byKeys.get(Number(args[2])) ?? '?'}`;
  const key = String(args[1] ?? '');
  return { command, key: key.slice(key.indexOf(':', key.indexOf(':') + 1) + 1) };
}

/** Every command Redis logged since the last reset, but the bench's own: {micros, name, key}. */
async function loggedCalls(redis, scripts) {
  const entries = await redis.call('SLOWLOG', 'GET', '-1');
  return entries.flatMap(([, , micros, args]) => {
    const command = String(args[0]).toUpperCase();
    if (OWN_COMMANDS.has(command)) return [];
    const name = callName(command, args, scripts);
    return [typeof name === 'string' ? { micros: Number(micros), name } : { micros: Number(micros), name: name.command, key: name.key }];
  });
}

/** Stages the namespace: the arrays first (each its own shape among the first ones), then the other runs spread over every shape. */
async function build(client, size) {
  const lengths = Array.from({ length: size.arrays }, (_, i) => (i === 0 ? size.bigArray : ARRAY_RUNS));
  const arrays = [];
  for (let i = 0; i < size.arrays; i += 100) {
    const requests = lengths.slice(i, i + 100).map((length, j) => ({
      command: ['true', '{index}'], resources: `x=${((i + j) % size.shapes) + 1}`, array: { indices: Array.from({ length }, (_, k) => k) },
    }));
    const { runs } = await client.stage(requests);
    arrays.push(...new Set(runs.map((run) => run.array)));
  }
  const rest = size.runs - lengths.reduce((sum, length) => sum + length, 0);
  const requests = Array.from({ length: size.shapes }, (_, i) => ({
    command: ['true'], resources: `x=${i + 1}`, repeat: Math.floor(rest / size.shapes) + (i < rest % size.shapes ? 1 : 0),
  })).filter((request) => request.repeat > 0);
  for (let i = 0; i < requests.length; i += 500) await client.stage(requests.slice(i, i + 500));
  return arrays;
}

/** The steps, in order: a name and what it does. */
function steps(url, queue, client, arrays) {
  const env = { FITQ_REDIS_URL: url, FITQ_QUEUE: queue };
  const fitq = (...args) => execa('node', [BIN, ...args], { env });
  return [
    ['fitq stage', () => fitq('stage', '-r', 'cpu=1', '--repeat', String(RUNNABLE), '--', 'true')],
    ['fitq worker --run-once', () => fitq('worker', '-r', 'cpu=4', '--concurrency', '4', '--run-once', '--log-format', 'json')],
    ['worker polling idle', async () => {
      const worker = await startWorker({ redisUrl: url, queue, resources: 'cpu=4', logger: silent, echoOutput: false, pollIntervalMs: IDLE_POLL_MS });
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      await worker.stop();
    }],
    ['fitq runs', () => fitq('runs')],
    ['fitq workers', () => fitq('workers')],
    ['fitq hold --array', () => fitq('hold', '--array', arrays[0])],
    ['fitq release --array', () => fitq('release', '--array', arrays[0])],
    ['fitq cancel --array', () => fitq('cancel', '--array', arrays[0])],
    ['fitq restart --array', () => fitq('restart', '--array', arrays[0])],
    ['/metrics read', () => renderNamespaceMetrics(new Map([[queue, client]]), {})],
    ['fitq runs clean', async () => {
      await fitq('cancel', '--array', arrays[Math.floor(arrays.length / 2)]);
      await fitq('runs', 'clean');
    }],
  ];
}

/** One namespace: built, then each step with the SLOWLOG reset before and read after. */
async function runSize(url, queue, size, redis, scriptBySha) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  const calls = [];
  const byStep = [];
  try {
    const arrays = await build(client, size);
    for (const [name, step] of steps(url, queue, client, arrays)) {
      await redis.call('SLOWLOG', 'RESET');
      await step();
      const logged = await loggedCalls(redis, scriptBySha);
      for (const call of logged) calls.push(call);
      const longest = logged.reduce((max, call) => (call.micros > max.micros ? call : max), { micros: 0, name: '-' });
      byStep.push({ name, calls: logged.length, longest });
    }
  } finally {
    await client.close();
  }
  const byName = new Map();
  for (const call of calls) {
    if (!byName.has(call.name)) byName.set(call.name, []);
    byName.get(call.name).push(call.micros);
  }
  const scripts = [...byName].map(([name, times]) => {
    const sorted = times.sort((a, b) => a - b);
    return { name, calls: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1] };
  });
  const longest = calls.reduce((max, call) => (call.micros > max.micros ? call : max), { micros: 0, name: '-' });
  return { ...size, scripts, byStep, longest };
}

/** Both namespaces, large then small, on the Redis at `url`. */
export async function longestCall(url, newQueue) {
  const redis = new Redis(url);
  try {
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '1000000');
    const all = luaScripts();
    const byKeys = new Map();
    for (const script of all) byKeys.set(script.numberOfKeys, [...(byKeys.get(script.numberOfKeys) ?? '').split('|').filter(Boolean), script.name].join('|'));
    const scriptBySha = { bySha: new Map(all.map((script) => [script.sha, script.name])), byKeys };
    const sizes = [];
    for (const size of SIZES) sizes.push(await runSize(url, newQueue(), size, redis, scriptBySha));
    return sizes;
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', '10000');
    redis.disconnect();
  }
}
