// The claims a real worker makes, timed by Redis itself: a `fitq worker
// --run-once` process (as users start it) runs the runs that fit it while
// runs it can never run wait beside them, and Redis's SLOWLOG, set to record
// every command, gives each call's time inside Redis. Reported per case: the
// claim script's p50, p90 and longest call, and the longest call of any
// command meanwhile. The baseline is the floor of any script call, a script
// that does nothing, timed the same way in the same run.
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { FitqClient } from '../dist/index.js';
import { luaScripts } from '../dist/queue/lua-source.js';

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
/** Runs of `true` the worker runs in each case. */
const RUNNABLE = Number(process.env.BENCH_CLAIM_RUNS ?? 400);

/**
 * The cases: the runs beside the runnable ones that the worker (cpu=4) can
 * never run, one per shape; or (`arrays`) arrays of the runnable runs' own
 * demands, each limited to one run at once, staged before them.
 */
export const CLAIM_CASES = [
  { name: 'one shape', unrunnable: () => undefined },
  { name: '1,000 shapes too big', unrunnable: (i) => (i < 1000 ? `cpu=${5 + i}` : undefined) },
  { name: '1,000 shapes needing a resource it lacks', unrunnable: (i) => (i < 1000 ? `lic=${1 + i}` : undefined) },
  { name: '20,000 shapes too big', unrunnable: (i) => (i < 20_000 ? `cpu=${5 + i}` : undefined) },
  { name: '1,000 arrays of the same demands (%1, 2 runs each)', unrunnable: () => undefined, arrays: 1000 },
];

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

/** The bench's own commands, left out of what the worker did. */
const OWN_COMMANDS = new Set(['SLOWLOG', 'CONFIG']);

/** The script a logged EVALSHA ran, by its SHA. (An EVAL, a script sent in full the first time, is logged cut to 128 bytes: not named.) */
function scriptOf(command, arg, scriptBySha) {
  return command.startsWith('EVALSHA') ? scriptBySha.get(arg) : undefined;
}

/** Every command Redis logged since the last reset, but the bench's own: {micros, command, script}. */
async function loggedCalls(redis, scriptBySha) {
  const entries = await redis.call('SLOWLOG', 'GET', '-1');
  return entries.flatMap(([, , micros, args]) => {
    const command = String(args[0]).toUpperCase();
    if (OWN_COMMANDS.has(command)) return [];
    return [{ micros: Number(micros), command, script: scriptOf(command, String(args[1] ?? ''), scriptBySha) }];
  });
}

async function recordEverything(redis) {
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.config('SET', 'slowlog-max-len', '1000000');
}

/** The floor: an EVALSHA of a script that does nothing, p50 in µs. */
async function emptyScriptMicros(redis) {
  const sha = await redis.script('LOAD', 'return 1');
  await redis.call('SLOWLOG', 'RESET');
  for (let i = 0; i < 2000; i++) await redis.evalsha(sha, 0);
  const times = (await loggedCalls(redis, new Map())).filter((call) => call.command === 'EVALSHA').map((call) => call.micros);
  return quantile(times.sort((a, b) => a - b), 0.5);
}

/** One case: stages its runs, runs the CLI worker to its end, reads what Redis logged meanwhile. */
async function runCase(url, queue, claimCase, scriptBySha, redis) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    const requests = [];
    for (let i = 0; ; i++) {
      const resources = claimCase.unrunnable(i);
      if (resources === undefined) break;
      requests.push({ command: ['true'], resources });
    }
    for (let i = 0; i < requests.length; i += 500) await client.stage(requests.slice(i, i + 500));
    for (let i = 0; i < (claimCase.arrays ?? 0); i++) {
      await client.stage({ command: ['true'], resources: 'cpu=1', array: { indices: [0, 1], limit: 1 } });
    }
    await client.stage({ command: ['true'], resources: 'cpu=1', repeat: RUNNABLE });
  } finally {
    await client.close();
  }
  await redis.call('SLOWLOG', 'RESET');
  await execa('node', [BIN, 'worker', '-r', 'cpu=4', '--concurrency', '4', '--run-once', '--log-format', 'json'], {
    env: { FITQ_REDIS_URL: url, FITQ_QUEUE: queue },
  });
  const calls = await loggedCalls(redis, scriptBySha);
  const claims = calls.filter((call) => call.script === 'claimRun').map((call) => call.micros).sort((a, b) => a - b);
  const longest = calls.reduce((max, call) => (call.micros > max.micros ? call : max), { micros: 0 });
  return {
    claims: claims.length,
    p50: quantile(claims, 0.5),
    p90: quantile(claims, 0.9),
    max: claims[claims.length - 1] ?? 0,
    longest: `${longest.script ? `${longest.command} ${longest.script}` : longest.command} ${longest.micros} µs`,
  };
}

/** Runs every case against a Redis of its own (`url`); the floor first. */
export async function workerClaims(url, newQueue) {
  const redis = new Redis(url);
  try {
    await recordEverything(redis);
    const scriptBySha = new Map(luaScripts().map((script) => [script.sha, script.name]));
    const floor = await emptyScriptMicros(redis);
    const cases = [];
    for (const claimCase of CLAIM_CASES) cases.push({ name: claimCase.name, ...(await runCase(url, newQueue(), claimCase, scriptBySha, redis)) });
    return { floor, cases };
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', '10000');
    redis.disconnect();
  }
}
