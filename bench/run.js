#!/usr/bin/env node
// fitq benchmarks. Each measures fitq and a baseline in the same run and
// prints the ratio: raw process spawn and raw BullMQ for running commands,
// raw BullMQ for wake-up latency, the claim at a shallow vs a deep queue and
// with one vs 1,000 demand shapes, staging 100,000 runs in chunks vs in one
// MULTI (how long Redis is held), and scheduling quality (makespan against a
// lower bound, bench/scheduling.js).
// Needs a built dist/ (npm run bench builds first) and redis-server on PATH.
// `node bench/run.js scheduling` runs the scheduling case alone, `node
// bench/run.js cli` the CLI worker against raw child_process.spawn, `node
// bench/run.js shapes` the claim against the number of shapes, `node
// bench/run.js staging` the batch staging case, `node bench/run.js claims`
// the claims a real CLI worker makes, as Redis times them, `node
// bench/run.js metrics` a /metrics scrape against the number of shapes,
// `node bench/run.js bytes` Redis memory per staged and per finished run,
// `node bench/run.js start` how long `fitq --help`, `fitq runs` and `fitq
// stage` take to start and end, against `node -e 0`, `node bench/run.js
// listing` `fitq runs` and the dashboard's runs page and overview with
// 100,000 staged runs against 100, with the longest Redis call of each,
// `node bench/run.js claim-parts` where a one-shape claim's time goes,
// step by step, `node bench/run.js longest` the longest script call of what users do on a large queue
// (100,000 staged runs, 20,000 shapes, 1,000 arrays) against a small one,
// `node bench/run.js wait` what --redis-wait-replicas costs (bench/replica-wait.js),
// `node bench/run.js scale` claims per second as simulated workers grow (8,
// 32, 128) on one Redis and on a 3-master cluster with 4 namespaces, against
// a script doing nothing, and Redis CPU per claim (bench/scale.js), `node
// bench/run.js gpu-probe` what probing 8 GPUs costs an idle CLI worker, and
// how soon a run starts once a foreign process leaves its device
// (bench/gpu-probe.js), `node bench/run.js enforce` what `--enforce mem,cpu`
// costs the CLI worker per run (a cgroup made, joined and removed), against
// the same worker without it and raw spawn, `node bench/run.js quotas` the
// claim with 50 users' quotas on against the same queue without them, and
// with fair share on against off (bench/quotas.js), `node bench/run.js
// preemption` the claim holding a blocked head beside 16 preemptible runs
// it may not preempt against 16 runs that are not preemptible
// (bench/preemption.js).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { Queue, Worker as BullWorker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { FitqClient, startWorker } from '../dist/index.js';
import { Scripts } from '../dist/queue/scripts.js';
import { prepareRuns, runShape } from '../dist/model/stage.js';
import { runDataJson } from '../dist/model/run-data.js';
import { throwawayRedis } from '../scripts/local-redis.js';
import { schedulingQuality } from './scheduling.js';
import { workerClaims } from './worker-claims.js';
import { metricsScrape } from './metrics-scrape.js';
import { bytesPerRun } from './bytes.js';
import { cliStart } from './cli-start.js';
import { listing } from './listing.js';
import { claimParts } from './claim-parts.js';
import { longestCall } from './longest-call.js';
import { replicaWaitCost } from './replica-wait.js';
import { scale } from './scale.js';
import { gpuProbeCost } from './gpu-probe.js';
import { quotaClaims } from './quotas.js';
import { preemptionClaims } from './preemption.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
/** Runs of `true` for the CLI worker case, and its concurrency. */
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 2000);
const CLI_CONCURRENCY = 8;
/** Alternating rounds of raw spawn and the CLI worker. */
const CLI_ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 3);
/**
 * The CLI worker case in the previous release (a claimed run handed to a
 * per-worker BullMQ execution queue), measured on the 2-core development box:
 * 22.7 ms/run against 8.3 ms/run for raw spawn, 0.37× raw spawn's speed.
 */
const PREVIOUS_CLI = { msPerRun: 22.7, spawnMsPerRun: 8.3, speed: 0.37 };
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const LATENCY_SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
/** Runs of the batch staging case. */
const STAGE_RUNS = Number(process.env.BENCH_STAGE_RUNS ?? 100_000);
const silent = pino({ level: 'silent' });
const redis = await throwawayRedis();
const results = [];
const notes = [];
let queueCounter = 0;
const newQueue = () => `bench${Date.now().toString(36)}${queueCounter++}`;

function report(name, fitq, baseline, unit, target) {
  results.push({ name, fitq, baseline, unit, ratio: fitq / baseline, target });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)];

/** Baseline: spawn `true` RUNS times, `concurrency` at a time. */
async function rawSpawn(concurrency) {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < RUNS) await execa('true');
    }),
  );
  return (performance.now() - start) / RUNS;
}

/** Baseline: raw BullMQ jobs whose processor spawns `true`. */
async function rawBullmq(concurrency) {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const name = newQueue();
  const queue = new Queue(name, { connection });
  let done = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const worker = new BullWorker(name, async () => {
    await execa('true');
    if (++done === RUNS) finish();
  }, { connection, concurrency });
  await worker.waitUntilReady();
  const start = performance.now();
  await queue.addBulk(Array.from({ length: RUNS }, (_, i) => ({ name: 'run', data: { i }, opts: { removeOnComplete: true } })));
  await finished;
  const perJob = (performance.now() - start) / RUNS;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return perJob;
}

/** fitq: stage RUNS runs of `true` in one batch, one worker runs them all. */
async function fitqThroughput(concurrency) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  const start = performance.now();
  await client.stage({ command: ['true'], resources: 'cpu=1', repeat: RUNS });
  const worker = await startWorker({
    redisUrl: redis.url, queue, resources: `cpu=${concurrency}`, concurrency, runOnce: true, logger: silent, echoOutput: false,
  });
  await worker.done;
  const perRun = (performance.now() - start) / RUNS;
  await client.close();
  return perRun;
}

/**
 * Baseline for the CLI worker: child_process.spawn of `true`, CLI_RUNS times,
 * `concurrency` at a time, with stdout and stderr piped and drained (as the
 * worker does with a run's output).
 */
async function rawSpawnPiped(concurrency) {
  const once = () =>
    new Promise((resolve, reject) => {
      const child = spawn('true', { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.resume();
      child.stderr.resume();
      child.once('error', reject);
      child.once('close', resolve);
    });
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < CLI_RUNS) await once();
    }),
  );
  return (performance.now() - start) / CLI_RUNS;
}

/**
 * fitq as users run it: CLI_RUNS staged runs of `true`, then `fitq worker
 * --run-once` (a process of its own, start-up included) until it exits.
 */
async function cliWorkerThroughput(concurrency, { demands = 'cpu=1', capacity = `cpu=${concurrency}`, flags = [] } = {}) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  await client.stage({ command: ['true'], resources: demands, repeat: CLI_RUNS });
  await client.close();
  const start = performance.now();
  await execa('node', [BIN, 'worker', '-r', capacity, '--concurrency', String(concurrency), '--run-once', '--log-format', 'json', ...flags], {
    env: { FITQ_REDIS_URL: redis.url, FITQ_QUEUE: queue },
    buffer: false,
    stdout: 'ignore',
    stderr: 'inherit',
  });
  return (performance.now() - start) / CLI_RUNS;
}

/**
 * The CLI worker against raw spawn, at the same concurrency, in CLI_ROUNDS
 * alternating rounds (raw, fitq, raw, fitq, ...): a load that comes and goes
 * meets both, and the round with the median ratio is reported.
 */
async function reportCliWorker() {
  const rounds = [];
  for (let round = 0; round < CLI_ROUNDS; round++) {
    const spawned = await rawSpawnPiped(CLI_CONCURRENCY);
    const cli = await cliWorkerThroughput(CLI_CONCURRENCY);
    rounds.push({ spawned, cli, speed: spawned / cli });
  }
  const { spawned, cli } = [...rounds].sort((a, b) => a.speed - b.speed)[Math.floor(rounds.length / 2)];
  const previous = `previous release ${(PREVIOUS_CLI.msPerRun / PREVIOUS_CLI.spawnMsPerRun).toFixed(2)}×`;
  report(`CLI worker, ${CLI_RUNS} runs of \`true\`, concurrency ${CLI_CONCURRENCY} (vs raw spawn, pipes drained)`, cli, spawned, 'ms/run', `fitq ≥ 0.8× spawn speed: ≤ 1.25× (${previous})`);
  notes.push(
    `CLI worker: ${(1000 / cli).toFixed(0)} runs/s, raw spawn ${(1000 / spawned).toFixed(0)} runs/s (fitq at ${(spawned / cli).toFixed(2)}× raw spawn's speed, ` +
      `median of ${CLI_ROUNDS} alternating rounds: ${rounds.map(({ speed }) => `${speed.toFixed(2)}×`).join(', ')}); ` +
      `previous release: ${PREVIOUS_CLI.speed.toFixed(2)}× raw spawn's speed, ${PREVIOUS_CLI.msPerRun} ms/run against ${PREVIOUS_CLI.spawnMsPerRun} ms/run (measured on the 2-core development box)`,
  );
}

/**
 * What `--enforce mem,cpu` costs per run: the CLI worker on runs of `true`
 * demanding cpu=1 mem=100M, with and without it, against raw spawn, in
 * CLI_ROUNDS alternating rounds (the median round reported). Each enforced
 * run makes its cgroups (memory, cpuacct, cpu), joins them through a `sh`
 * before the command, and removes them once it ended.
 */
async function reportEnforce() {
  const { openCgroupLayout, closeCgroupLayout } = await import('../dist/worker/usage/cgroup-host.js');
  const layout = openCgroupLayout(new Set(['mem', 'cpu']));
  if ('why' in layout) {
    console.log(`skipped: this machine does not let a worker make cgroups: ${layout.why}`);
    return;
  }
  closeCgroupLayout(layout);
  const options = { demands: 'cpu=1 mem=100M', capacity: `cpu=${CLI_CONCURRENCY} mem=${CLI_CONCURRENCY * 100}M` };
  const rounds = [];
  for (let round = 0; round < CLI_ROUNDS; round++) {
    const spawned = await rawSpawnPiped(CLI_CONCURRENCY);
    const plain = await cliWorkerThroughput(CLI_CONCURRENCY, options);
    const enforced = await cliWorkerThroughput(CLI_CONCURRENCY, { ...options, flags: ['--enforce', 'mem,cpu'] });
    rounds.push({ spawned, plain, enforced, ratio: plain / enforced });
  }
  const { spawned, plain, enforced } = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
  report(`CLI worker --enforce mem,cpu, ${CLI_RUNS} runs of \`true\`, concurrency ${CLI_CONCURRENCY} (vs the same worker without it)`, enforced, plain, 'ms/run', 'a cgroup per run, made, joined and removed');
  report('CLI worker --enforce mem,cpu (vs raw spawn, pipes drained)', enforced, spawned, 'ms/run', 'for comparison');
  notes.push(
    `--enforce mem,cpu: ${(1000 / enforced).toFixed(0)} runs/s, the same worker without it ${(1000 / plain).toFixed(0)} runs/s, raw spawn ${(1000 / spawned).toFixed(0)} runs/s ` +
      `(enforced at ${(plain / enforced).toFixed(2)}× the plain worker's speed, rounds ${rounds.map(({ ratio }) => `${ratio.toFixed(2)}×`).join(', ')}; ` +
      `${(enforced - plain).toFixed(2)} ms more per run, on runs that last nothing)`,
  );
}

/** fitq: an idle worker; stage one run at a time; until the command itself runs (it prints the time). */
async function fitqWakeLatency() {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  const worker = await startWorker({ redisUrl: redis.url, queue, logger: silent, echoOutput: false });
  const latencies = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const stagedAt = Date.now();
    const { runs } = await client.stage({ command: ['date', '+%s%3N'] });
    await client.waitForEnd(runs[0].id);
    const [line] = await client.readLog(runs[0].id);
    latencies.push(Number(line.line) - stagedAt);
  }
  await worker.stop();
  await client.close();
  return latencies;
}

/** Baseline: an idle BullMQ worker; add one job at a time; its processor runs the same command. */
async function bullmqWakeLatency() {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const name = newQueue();
  const queue = new Queue(name, { connection });
  let started;
  const worker = new BullWorker(name, async (job) => {
    const { stdout } = await execa('date', ['+%s%3N']);
    started(Number(stdout) - job.data.addedAt);
  }, { connection });
  await worker.waitUntilReady();
  const latencies = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const latency = new Promise((resolve) => (started = resolve));
    await queue.add('run', { addedAt: Date.now() }, { removeOnComplete: true });
    latencies.push(await latency);
  }
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return latencies;
}

/**
 * The claim script's server time against the depth of the staged queue: runs
 * in 5 shapes that do not fit, at two depths; a worker claims 500 times.
 */
async function claimCost(depth) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  for (const shape of ['big=10', 'big=20', 'big=30', 'big=40', 'big=50']) {
    await client.stage({ command: ['true'], resources: `${shape} cpu=1`, repeat: depth / 5 });
  }
  const scripts = new Scripts(client.redis, client.keys, 10_000);
  await scripts.registerWorker(
    { name: 'probe', token: 't', leaseMs: 60_000, concurrency: 0, host: 'bench', pid: 0, resources: 'big=5 cpu=1', executorQueue: '' },
  );
  await client.redis.config('RESETSTAT');
  for (let i = 0; i < 500; i++) await scripts.claimRun('probe', 't', 0);
  const stats = await client.redis.info('commandstats');
  await scripts.deregisterWorker('probe', 't');
  await client.close();
  const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(stats);
  return evalsha ? Number(evalsha[2]) / Number(evalsha[1]) : NaN;
}

/**
 * The claim script's server time against the number of demand shapes: a
 * worker (cpu=1) runs a cpu=1 run, cpu=1 runs wait behind it (the first its
 * blocked head), and `extra` staged after them; the worker claims 500 times.
 */
async function claimShapesCost(extra) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  const scripts = new Scripts(client.redis, client.keys, 10_000);
  await scripts.registerWorker({ name: 'probe', token: 't', leaseMs: 60_000, concurrency: 0, host: 'bench', pid: 0, resources: 'cpu=1' });
  await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
  await scripts.claimRun('probe', 't', 0);
  for (let i = 0; i < extra.length; i += 500) {
    await client.stage(extra.slice(i, i + 500).map((resources) => ({ command: ['true'], resources })));
  }
  await client.redis.config('RESETSTAT');
  for (let i = 0; i < 500; i++) await scripts.claimRun('probe', 't', 0);
  const stats = await client.redis.info('commandstats');
  await scripts.deregisterWorker('probe', 't');
  await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
  await client.close();
  const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(stats);
  return evalsha ? Number(evalsha[2]) / Number(evalsha[1]) : NaN;
}

/** The claim with 1,000 shapes no worker can run (foo=$i), and with 1,000 it can run, against one shape. */
async function reportClaimShapes() {
  const one = await claimShapesCost([]);
  const lacking = await claimShapesCost(Array.from({ length: 1000 }, (_, i) => `foo=${i + 1}`));
  const runnable = await claimShapesCost(Array.from({ length: 1000 }, (_, i) => `cpu=0.${String(i + 1).padStart(4, '0')}`));
  report('claim script, 1,000 shapes the worker lacks a resource of vs one shape', lacking, one, 'µs/call', '< 2×');
  report('claim script, 1,000 shapes the worker can run vs one shape', runnable, one, 'µs/call', '< 1 ms');
}

/**
 * A second connection, in a process of its own (so the stager's own work
 * never delays it), PINGs Redis in a loop until stopped; resolves with the
 * longest wait for a reply, in ms.
 */
function startPinger() {
  const source = `
    const { Redis } = await import('ioredis');
    const redis = new Redis(process.argv[1]);
    let longest = 0, stop = false;
    process.stdin.on('data', () => { stop = true; }).resume();
    process.send('ready');
    while (!stop) {
      const start = performance.now();
      await redis.ping();
      longest = Math.max(longest, performance.now() - start);
    }
    process.send(longest);
    redis.disconnect();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source, redis.url], {
    stdio: ['pipe', 'inherit', 'inherit', 'ipc'], cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  const messages = [];
  let wake = () => {};
  child.on('message', (message) => { messages.push(message); wake(); });
  const next = async () => {
    while (messages.length === 0) await new Promise((resolve) => (wake = resolve));
    return messages.shift();
  };
  return {
    ready: next(),
    async stop() {
      child.stdin.end('stop');
      return next();
    },
  };
}

/**
 * Stages STAGE_RUNS runs of one shape while another connection PINGs:
 * fitq's staging (chunks of bounded script calls, committed at the end), or
 * the way it was before (the same stage script, chunks of 2,000 runs, all in
 * one MULTI, driven here directly). Returns the longest PING wait, the
 * longest command as Redis's latency monitor timed it (a MULTI's EXEC
 * whole; from 10 ms) and the total staging time, in ms.
 */
async function stagingHold(chunked) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  const request = { command: ['true'], resources: 'cpu=1', repeat: STAGE_RUNS };
  await client.redis.config('SET', 'latency-monitor-threshold', '10');
  await client.redis.call('LATENCY', 'RESET');
  const pinger = startPinger();
  await pinger.ready;
  const start = performance.now();
  if (chunked) {
    await client.stage(request);
  } else {
    const runs = prepareRuns(request).map((run) => ({
      id: run.id, shape: runShape(run), priority: run.priority, data: runDataJson(run.fields, run.priority),
    }));
    const scripts = new Scripts(client.redis, client.keys, 10_000);
    const multi = client.redis.multi();
    for (let i = 0; i < runs.length; i += 2000) await scripts.stageRuns(runs.slice(i, i + 2000), multi);
    await multi.exec();
  }
  const elapsed = performance.now() - start;
  const longest = await pinger.stop();
  const command = (await client.redis.call('LATENCY', 'LATEST')).find(([event]) => event === 'command');
  await client.redis.config('SET', 'latency-monitor-threshold', '0');
  await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
  await client.close();
  return { longest, elapsed, command: command ? Number(command[3]) : 0 };
}

/** The batch staging case: chunked against one MULTI, on the same Redis. */
async function reportStaging() {
  const multi = await stagingHold(false);
  const chunked = await stagingHold(true);
  const runs = STAGE_RUNS.toLocaleString('en');
  report(`stage ${runs} runs: longest PING wait, chunked vs one MULTI`, chunked.longest, multi.longest, 'ms', '< 50 ms');
  report(`stage ${runs} runs: total time, chunked vs one MULTI`, chunked.elapsed, multi.elapsed, 'ms', 'for comparison');
  notes.push(
    `Staging ${runs} runs: the longest command as Redis timed it (latency monitor, from 10 ms): ` +
      `chunked ${chunked.command} ms, one MULTI ${multi.command} ms (a PING wait adds the client's scheduling on a busy box)`,
  );
}

/** The seed GPU scenario (aaa gpu0, bbb gpu0, ccc gpu0+gpu1, ddd gpu1; 0.3 s each): wall time under a policy. */
async function seedScenarioMakespan(policy) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: redis.url, queue });
  for (const resources of ['gpu0=1', 'gpu0=1', 'gpu0=1 gpu1=1', 'gpu1=1']) {
    await client.stage({ command: ['sleep', '0.3'], resources });
  }
  const start = performance.now();
  const worker = await startWorker({
    redisUrl: redis.url, queue, resources: 'gpu0=1 gpu1=1', runOnce: true, policy, logger: silent, echoOutput: false,
  });
  await worker.done;
  const elapsed = performance.now() - start;
  await client.close();
  return elapsed;
}

/** The scheduling case: makespan over the lower bound, backfill and fifo on the same workload. */
async function reportSchedulingQuality() {
  const { runs, limitFactor, results } = await schedulingQuality(redis.url, newQueue);
  for (const { policy, limited, sorted, makespan, bound } of results) {
    const target = policy === 'fifo' || sorted ? 'for comparison' : limited ? '≤ 1.05×' : '≤ 1.12×';
    const variant = (limited ? `, time limits ${limitFactor}× durations` : policy === 'backfill' ? ', no time limits' : '') + (sorted ? ', staged longest first' : '');
    report(`GPU sweep of ${runs} runs on 2 workers, --policy ${policy}${variant}: makespan vs lower bound`, makespan, bound, 'ms', target);
  }
  const overheads = results.map(({ policy, limited, sorted, overhead }) => `${policy}${limited ? ' (limits)' : ''}${sorted ? ' (longest first)' : ''} ${overhead.toFixed(0)} ms`).join(', ');
  notes.push(`GPU sweep: each run's record spans on average this much beyond its sleep (hand-over, process start, recording): ${overheads}`);
}

/** The claim as a real CLI worker makes it, timed by Redis's SLOWLOG (bench/worker-claims.js). */
async function reportWorkerClaims() {
  const { floor, cases } = await workerClaims(redis.url, newQueue);
  const [one] = cases;
  report('worker claims, one shape: claim script p50 (vs a script doing nothing)', one.p50, Math.max(1, floor), 'µs', 'p50 ≤ 200 µs');
  for (const claimCase of cases.slice(1)) {
    report(`worker claims, ${claimCase.name}: claim script p50 vs one shape`, claimCase.p50, Math.max(1, one.p50), 'µs', '≤ 2×');
  }
  for (const claimCase of cases) {
    notes.push(
      `Worker claims, ${claimCase.name}: ${claimCase.claims} claim calls, p50 ${claimCase.p50} µs, p90 ${claimCase.p90} µs, longest ${claimCase.max} µs; ` +
        `longest call of any command meanwhile: ${claimCase.longest} (Redis's SLOWLOG)`,
    );
  }
}

/** A /metrics scrape of many staged runs over many shapes against one shape (bench/metrics-scrape.js). */
async function reportMetricsScrape() {
  const { runs, shapes, one, many, ended } = await metricsScrape(redis.url, newQueue);
  const count = (n) => n.toLocaleString('en');
  report(`/metrics scrape, ${count(runs)} staged runs over ${count(shapes)} shapes vs one shape`, many.bounded.ms, one.bounded.ms, 'ms', '≤ 50 ms');
  report(`/metrics scrape, ${count(runs)} canceled runs vs ${count(runs)} staged in one shape`, ended.ms, one.bounded.ms, 'ms', `no call over 10 ms (longest ${ended.longestMs.toFixed(1)} ms)`);
  const scrapes = [[`${count(shapes)} shapes`, many.bounded], ['one shape', one.bounded], [`${count(shapes)} shapes, every shape shown (for comparison)`, many.every]];
  for (const [name, scrape] of scrapes) {
    notes.push(
      `/metrics scrape, ${name}: ${scrape.ms.toFixed(1)} ms (its read-only script calls hold Redis ${scrape.scriptMs.toFixed(1)} ms each on average), ${count(scrape.bytes)} bytes, ${count(scrape.series)} series ` +
        `(fitq_staged_runs: ${count(scrape.stagedSeries)} series summing to ${count(scrape.stagedSum)} runs)`,
    );
  }
}

/** Redis memory per staged run against a plain BullMQ job with the same data, and per finished run (bench/bytes.js). */
async function reportBytes() {
  const { runs, finishedRuns, longRuns, staged, bullmq, finished, long, longBullmq } = await bytesPerRun(redis.url, newQueue);
  const count = (n) => n.toLocaleString('en');
  const parts = (list) => list.map(({ kind, bytes }) => `${kind} ${bytes.toFixed(1)}`).join(', ');
  const fields = ({ encoding, bytes, fields }) =>
    `${bytes} B (${encoding}, ${fields.length} fields: ${fields.map(({ name, bytes: b }) => `${name} ${b}`).join(', ')}, as name + value bytes)`;
  report(`bytes per staged run, ${count(runs)} runs vs a plain BullMQ job with the same data`, staged.perRun, bullmq.perJob, 'B/run', '≤ 600 B');
  report(`bytes per finished run of \`true\`, ${count(finishedRuns)} runs (vs a plain BullMQ job)`, finished.perRun, bullmq.perJob, 'B/run', '≤ 1 KiB + output');
  report(`bytes per staged run, job data over 64 bytes (${Buffer.byteLength(long.hash.data)}), ${count(longRuns)} runs vs a plain BullMQ job`, long.perRun, longBullmq.perJob, 'B/run', 'for comparison');
  notes.push(
    `Bytes per staged run, by key kind (MEMORY USAGE, shared keys divided by ${count(runs)} runs): ${parts(staged.parts)}`,
    `Bytes per plain BullMQ job, by key kind: ${parts(bullmq.parts)}`,
    `Bytes per finished run, by key kind (${count(finished.completed)} kept as completed): ${parts(finished.parts)}`,
    `A staged run's job hash: ${fields(staged.hash)}`,
    `A finished run's job hash: ${fields(finished.hash)}`,
    `A staged run's job hash, job data over 64 bytes: ${fields(long.hash)}`,
  );
}

/** A CLI command from spawn to exit against `node -e 0`, alternating (bench/cli-start.js). */
async function reportCliStart() {
  const { rounds, cases } = await cliStart(redis.url, newQueue);
  for (const { name, where, ms, nodeMs, pairRatio } of cases) {
    report(`\`${name}\`${where ? `, ${where}` : ''}, spawn to exit (vs \`node -e 0\`)`, ms, nodeMs, 'ms', '≤ 250 ms');
    notes.push(`${name}: median ${ms.toFixed(0)} ms, \`node -e 0\` beside it ${nodeMs.toFixed(0)} ms, ratio pair by pair ${pairRatio.toFixed(2)}× (${rounds} rounds)`);
  }
}

/** `fitq runs` and the dashboard's runs page and overview, 100,000 staged runs against 100 (bench/listing.js). */
async function reportListing() {
  const { runs, baselineRuns, shapes, arrays, few, many, spread } = await listing(redis.url, newQueue);
  const count = (n) => n.toLocaleString('en');
  const cases = [['`fitq runs`, spawn to exit', 'table'], ['`fitq runs --json` (first page), spawn to exit', 'json'], ['dashboard runs page, GET', 'runsPage'], ['dashboard overview, GET', 'overview']];
  for (const [name, key] of cases) {
    report(`${name}, ${count(runs)} staged vs ${count(baselineRuns)}`, many[key].ms, few[key].ms, 'ms', '≈ 1×');
    const longest = ({ micros, command }) => `${(micros / 1000).toFixed(2)} ms (${command})`;
    notes.push(
      `${name}: ${count(runs)} staged ${many[key].ms.toFixed(0)} ms, longest Redis call ${longest(many[key].longest)}; ${count(baselineRuns)} staged ${few[key].ms.toFixed(0)} ms, longest ${longest(few[key].longest)}; ` +
        `${count(runs)} staged over ${count(shapes)} shapes, ${count(arrays)} arrays ${spread[key].ms.toFixed(0)} ms, longest ${longest(spread[key].longest)}`,
    );
  }
}

/** Where a one-shape claim's time goes, step by step (bench/claim-parts.js). */
async function reportClaimParts() {
  const { claimMicros, emptyMicros, steps } = await claimParts(redis.url, newQueue());
  report('claim script, one shape, p50 (vs a script doing nothing, same KEYS and ARGV)', claimMicros, Math.max(1, emptyMicros), 'µs', 'p50 ≤ 200 µs');
  const total = steps.reduce((sum, step) => sum + step.micros, 0);
  notes.push(`Claim, step by step (medians of ${steps[0]?.samples ?? 0} claims, each with a clock reading of some 2 µs; sum ${total} µs):\n${steps.map((step) => `  ${step.name}: ${step.micros} µs`).join('\n')}`);
}

/** The longest script call of what users do, a large queue against a small one (bench/longest-call.js). */
async function reportLongestCall() {
  const sizes = await longestCall(redis.url, newQueue);
  const [large, small] = sizes;
  const count = (n) => n.toLocaleString('en');
  const ms = (micros) => `${(micros / 1000).toFixed(2)} ms`;
  report(
    `longest script call, ${count(large.runs)} staged runs, ${count(large.shapes)} shapes, ${count(large.arrays)} arrays vs ${count(small.runs)} runs, 1 shape`,
    large.longest.micros / 1000, Math.max(0.001, small.longest.micros / 1000), 'ms', '≤ 10 ms',
  );
  for (const size of sizes) {
    notes.push(`Longest call, ${size.name} queue (${count(size.runs)} runs, ${count(size.shapes)} shapes, ${count(size.arrays)} arrays): ${size.longest.name}${size.longest.key ? ` ${size.longest.key}` : ''} ${ms(size.longest.micros)}`);
    notes.push(`  per step, its longest call: ${size.byStep.map((step) => `${step.name}: ${step.longest.name}${step.longest.key ? ` ${step.longest.key}` : ''} ${ms(step.longest.micros)} (${step.calls} calls)`).join('; ')}`);
  }
  const smallByName = new Map(small.scripts.map((script) => [script.name, script]));
  const lines = large.scripts
    .filter((script) => /^([a-z]|EVAL)/.test(script.name))
    .sort((a, b) => b.max - a.max)
    .map((script) => {
      const other = smallByName.get(script.name);
      const beside = other ? `small: ${other.calls} calls, p50 ${ms(other.p50)}, p99 ${ms(other.p99)}, longest ${ms(other.max)}` : 'small: not called';
      return `  ${script.name}: ${script.calls} calls, p50 ${ms(script.p50)}, p99 ${ms(script.p99)}, longest ${ms(script.max)} (${beside})`;
    });
  notes.push(`Per script, large queue (small queue beside it):\n${lines.join('\n')}`);
}

/** --redis-wait-replicas 1 against none, on a master with a replica (bench/replica-wait.js). */
async function reportReplicaWait() {
  const { cases, notes: said } = await replicaWaitCost();
  for (const c of cases) report(c.name, c.fitq, c.baseline, c.unit, c.target);
  notes.push(...said);
}

/** Claims per second as workers grow, on one Redis and on a 3-master cluster, and Redis CPU per claim (bench/scale.js). */
async function reportScale() {
  const { one, cluster, namespaces, masters, processes, windowSeconds, noopWindowSeconds } = await scale(redis.url, newQueue);
  const count = (n) => Math.round(n).toLocaleString('en');
  const rate = ({ total, seconds }) => total / seconds;
  const sum = (values) => values.reduce((total, value) => total + value, 0);
  const micros = (n) => `${n.toFixed(0)} µs`;
  const slowlog = (times) => (times ? `; SLOWLOG p50 claim ${micros(times.claim)}, finish ${micros(times.finish)}` : '');
  const nodeLine = (node) =>
    `${node.cores.toFixed(2)} core (main thread ${node.mainCores.toFixed(2)}), ${micros(node.mainMicrosPerClaim)} of its main thread per claim: ` +
    `${count(node.perCore)} claims per core; script time ${micros(node.scriptMicrosPerClaim)} per claim (${node.callsPerClaim.toFixed(2)} EVALSHA per claim${slowlog(node.scriptTimes)})`;
  const pointLine = (where, p) =>
    `Scale, ${where}, ${p.count} workers: ${count(rate(p.fitq))} claims/s (no-op ${count(rate(p.noop))} calls/s: ${(rate(p.fitq) / rate(p.noop)).toFixed(3)}×), ` +
    `load processes ${p.fitq.clientCores.toFixed(2)} core (${micros((p.fitq.clientCores / rate(p.fitq)) * 1e6)} per claim), load average ${p.fitq.load.toFixed(1)}${p.fitq.dry.length > 0 ? `; NOT MEASURED RIGHT, claims found no run: ${p.fitq.dry.join(', ')}` : ''}`;
  for (const p of one) {
    report(`one Redis, ${p.count} simulated workers: claims/s vs no-op script calls/s (same ${processes} processes, ${p.count} connections)`, rate(p.fitq), rate(p.noop), 'claims/s', 'for comparison (a claim is 2 calls: ≤ 0.5×)');
    notes.push(`${pointLine('one Redis', p)}\n  Redis: ${nodeLine(p.nodes[0])}`);
  }
  for (const p of cluster) {
    report(`${masters}-master cluster, ${namespaces.length} namespaces, ${p.count} simulated workers: claims/s vs no-op script calls/s`, rate(p.fitq), rate(p.noop), 'claims/s', 'for comparison (a claim is 2 calls: ≤ 0.5×)');
    notes.push(`${pointLine(`${masters}-master cluster`, p)}\n${p.nodes.map((node) => `  master ${node.name} (${node.queues.join(', ')}): ${count(node.claimsPerSecond)} claims/s, ${nodeLine(node)}`).join('\n')}`);
  }
  // Claims per Redis core over every point: all their claims over all their main-thread CPU seconds.
  const perCore = (points) => sum(points.flatMap((p) => p.nodes.map((node) => node.claims))) / sum(points.flatMap((p) => p.nodes.map((node) => node.mainCpu)));
  const [onePerCore, clusterPerCore] = [perCore(one), perCore(cluster)];
  // On a shared machine the least starved point is the fairest view of each: the most claims/s at any worker count.
  const most = (points) => points.reduce((best, p) => (rate(p.fitq) > rate(best.fitq) ? p : best));
  const [oneBest, clusterBest] = [most(one), most(cluster)];
  report(
    `most claims/s at any worker count: ${masters}-master cluster (${clusterBest.count} workers) vs one Redis (${oneBest.count}), all on this machine's cores`,
    rate(clusterBest.fitq), rate(oneBest.fitq), 'claims/s', 'for comparison',
  );
  report(`claims per Redis core (claims / Redis CPU seconds), every point: cluster masters vs one Redis`, clusterPerCore, onePerCore, 'claims/s', '≈ 1× (the same scripts on one core)');
  notes.push(
    `Scale: ${windowSeconds} s windows (the no-op's ${noopWindowSeconds} s) after a 1 s warm-up; ${processes} load processes; namespaces on the cluster, by slot: ` +
      `${namespaces.map(({ name, slot, port }) => `${name} (slot ${slot}, master :${port})`).join(', ')}`,
  );
  // What a claim costs this machine in all (Redis and the load processes): its cores bound the total, whatever the masters.
  const boxMicros = (p) => ((sum(p.nodes.map((node) => node.cores)) + p.fitq.clientCores) / rate(p.fitq)) * 1e6;
  const cores = availableParallelism();
  notes.push(
    `Scale, this machine: a claim costs ${micros(boxMicros(oneBest))} of CPU in all on one Redis (Redis and the load processes; ${oneBest.count} workers), ` +
      `${micros(boxMicros(clusterBest))} on the cluster (${clusterBest.count} workers): its ${cores} cores allow at most ${count((cores / boxMicros(oneBest)) * 1e6)} claims/s, however many masters share them`,
  );
  const expected = [1, 3, 6, 12].map((n) => `${n} master${n === 1 ? '' : 's'} ${count(n * clusterPerCore)}`).join(', ');
  notes.push(
    `Scale, expected: one namespace saturates one Redis core at about ${count(onePerCore)} claims/s (one Redis, every point; ` +
      `${count(clusterPerCore)} per master-core on the cluster); N masters serving evenly spread namespaces, each its own core: N × ${count(clusterPerCore)}: ${expected} claims/s`,
  );
}

/** The GPU probe: an idle CLI worker's CPU with it and without, and the wait from a device freed to its run started (bench/gpu-probe.js). */
async function reportGpuProbe() {
  const { on, off, mig, migOff, latencies, windowSeconds, devices, slices, intervalMs } = await gpuProbeCost(redis.url, newQueue);
  const percent = (share) => share * 100;
  report(`GPU probe, idle CLI worker, ${devices} devices, every ${intervalMs / 1000} s: worker CPU, % of one core (vs probe off)`, percent(on.own), percent(off.own), '%core', '≤ 2 % of one core (fitq column)');
  report(`GPU probe: nvidia-smi stand-in (a Node script) CPU, % of one core (vs probe off)`, percent(on.children), Math.max(percent(off.children), 0.01), '%core', 'for comparison (the real nvidia-smi costs less)');
  report(`GPU probe, idle CLI worker, ${devices} MIG-enabled GPUs, ${slices} MIG devices (reads -q -x too): worker CPU, % of one core (vs probe off)`, percent(mig.own), percent(migOff.own), '%core', '≤ 2 % of one core (fitq column)');
  const sorted = [...latencies].sort((a, b) => a - b);
  report(`GPU probe: foreign process gone -> waiting run started, median of ${latencies.length} (vs interval + 1 s)`, median(sorted), intervalMs + 1000, 'ms', '≤ 1×');
  report(`GPU probe: foreign process gone -> waiting run started, longest of ${latencies.length} (vs interval + 1 s)`, sorted[sorted.length - 1], intervalMs + 1000, 'ms', '≤ 1×');
  notes.push(
    `GPU probe: ${windowSeconds} s idle windows; worker ${percent(on.own).toFixed(2)} % of a core probing, ${percent(off.own).toFixed(2)} % not; ` +
      `its nvidia-smi stand-in ${percent(on.children).toFixed(2)} %; on MIG, worker ${percent(mig.own).toFixed(2)} % probing, ${percent(migOff.own).toFixed(2)} % not, ` +
      `stand-in ${percent(mig.children).toFixed(2)} %; waits (ms): ${sorted.map((ms) => ms.toFixed(0)).join(', ')}`,
  );
}

/** The claim with users' quotas on, against the same 50 users without, and one user; fair share on against off (bench/quotas.js). */
async function reportQuotas() {
  const { users, runs, claims, slots, rounds, quota, withQuotas, withoutQuotas, oneUser, fairOff, all } = await quotaClaims(redis.url, newQueue);
  report(`claim script, ${users} users with quotas (${quota.join(' ')} each) vs the same ${users} users without`, withQuotas.micros, withoutQuotas.micros, 'µs/call', '≤ 1.5×');
  report(`claim script, ${users} users without quotas vs one user`, withoutQuotas.micros, oneUser.micros, 'µs/call', '≈ 1×');
  report(`claim script, ${users} users, fair share on vs off`, withoutQuotas.micros, fairOff.micros, 'µs/call', '≤ 1.5×');
  const said = (c) => `${c.calls} claims timed, ${c.claimed} started a run, ${c.waited} found none it could start`;
  notes.push(
    `Quotas: ${runs.toLocaleString("en")} runs of cpu=1 staged by ${users} users in turn, a worker of cpu=${slots} claims ${claims} times (finishing its oldest run when full); ` +
      `with quotas: ${said(withQuotas)}; without: ${said(withoutQuotas)}; one user: ${said(oneUser)}; fair share off: ${said(fairOff)} (fair share is on in the others; ` +
      `SLOWLOG's server time per claim call, the median round of ${rounds}; each round's median µs: with ${all.withQuotas.join(', ')}, ` +
      `without ${all.withoutQuotas.join(', ')}, one user ${all.oneUser.join(', ')}, fair share off ${all.fairOff.join(', ')})`,
  );
}

/** The claim holding a blocked head beside preemptible runs it may not preempt, against runs that are not preemptible (bench/preemption.js). */
async function reportPreemption() {
  const { slots, claims, rounds, preemptible, plain, all } = await preemptionClaims(redis.url, newQueue);
  report(`claim script holding a blocked head, ${slots} running runs --preemptible (none may go) vs not preemptible`, preemptible.micros, plain.micros, 'µs/call', '≈ 1.2× (about 2 µs per preemptible run)');
  notes.push(
    `Preemption: a worker of cpu=${slots} runs ${slots} runs of cpu=1 and holds a blocked head of cpu=2 of their priority; ${claims} claims, ` +
      `SLOWLOG's server time per claim call, the median round of ${rounds}; each round's median µs: preemptible ${all.preemptible.join(', ')}, not ${all.plain.join(', ')}`,
  );
}

const only = process.argv[2];
if (only === 'preemption') {
  console.log(`fitq claim beside preemptible runs, Redis ${redis.url}\n`);
  await reportPreemption();
} else if (only === 'quotas') {
  console.log(`fitq claim with users' quotas, Redis ${redis.url}\n`);
  await reportQuotas();
} else if (only === 'gpu-probe') {
  console.log(`fitq GPU probe benchmark, Redis ${redis.url}\n`);
  await reportGpuProbe();
} else if (only === 'wait') {
  console.log('fitq --redis-wait-replicas cost, a master and a replica on this host\n');
  await reportReplicaWait();
} else if (only === 'claim-parts') {
  console.log(`fitq claim, step by step, Redis ${redis.url}\n`);
  await reportClaimParts();
} else if (only === 'scale') {
  console.log(`fitq claims per second as workers grow, one Redis (${redis.url}) and a 3-master cluster\n`);
  await reportScale();
} else if (only === 'longest') {
  console.log(`fitq longest script call, a large queue against a small one, timed by Redis, Redis ${redis.url}\n`);
  await reportLongestCall();
} else if (only === 'bytes') {
  console.log(`fitq bytes per run benchmark, Redis ${redis.url}\n`);
  await reportBytes();
} else if (only === 'start') {
  console.log(`fitq CLI start benchmark, Redis ${redis.url}\n`);
  await reportCliStart();
} else if (only === 'metrics') {
  console.log(`fitq /metrics scrape benchmark, Redis ${redis.url}\n`);
  await reportMetricsScrape();
} else if (only === 'claims') {
  console.log(`fitq claims of a real CLI worker, timed by Redis, Redis ${redis.url}\n`);
  await reportWorkerClaims();
} else if (only === 'scheduling') {
  console.log(`fitq scheduling benchmark, Redis ${redis.url}\n`);
  await reportSchedulingQuality();
} else if (only === 'enforce') {
  console.log(`fitq --enforce benchmark, Redis ${redis.url}\n`);
  await reportEnforce();
} else if (only === 'cli') {
  console.log(`fitq CLI worker benchmark, Redis ${redis.url}\n`);
  await reportCliWorker();
} else if (only === 'staging') {
  console.log(`fitq batch staging benchmark, Redis ${redis.url}\n`);
  await reportStaging();
} else if (only === 'listing') {
  console.log(`fitq listing benchmark, Redis ${redis.url}\n`);
  await reportListing();
} else if (only === 'shapes') {
  console.log(`fitq claim benchmark against the number of demand shapes, Redis ${redis.url}\n`);
  await reportClaimShapes();
} else {
  console.log(`fitq benchmarks: ${RUNS} runs per throughput case, ${LATENCY_SAMPLES} latency samples, Redis ${redis.url}\n`);
  // First: raw spawn forks this process, whose cost grows with its memory, which the later cases (100,000 runs staged
  // from here) swell; measured after them, the baseline ran at a third of its speed.
  await reportCliWorker();
  for (const concurrency of [1, 4]) {
    const spawn = await rawSpawn(concurrency);
    const bull = await rawBullmq(concurrency);
    const fitq = await fitqThroughput(concurrency);
    report(`run \`true\`, concurrency ${concurrency} (vs raw spawn)`, fitq, spawn, 'ms/run', '≤ 3×');
    report(`run \`true\`, concurrency ${concurrency} (vs raw BullMQ + spawn)`, fitq, bull, 'ms/run', '≤ 2×');
  }
  const fitqLatency = await fitqWakeLatency();
  const bullLatency = await bullmqWakeLatency();
  report('idle worker: staged -> command running, median', median(fitqLatency), Math.max(1, median(bullLatency)), 'ms', '< 100 ms');
  report('idle worker: staged -> command running, p95', p95(fitqLatency), Math.max(1, p95(bullLatency)), 'ms', '< 100 ms');
  report('seed GPU scenario, backfill vs fifo (wall time)', await seedScenarioMakespan('backfill'), await seedScenarioMakespan('fifo'), 'ms', '≈ 0.75× (3 run-lengths vs 4)');
  const shallow = await claimCost(100);
  const deep = await claimCost(20_000);
  report('claim script, 20,000 staged vs 100 staged', deep, shallow, 'µs/call', '≈ 1× (independent of depth)');
  await reportClaimShapes();
  await reportQuotas();
  await reportWorkerClaims();
  await reportClaimParts();
  await reportScale();
  await reportMetricsScrape();
  await reportLongestCall();
  await reportBytes();
  await reportCliStart();
  await reportListing();
  await reportStaging();
  await reportReplicaWait();
  await reportGpuProbe();
  await reportSchedulingQuality();
}

redis.stop();
const width = Math.max(...results.map((r) => r.name.length));
console.log(`${'case'.padEnd(width)}  ${'fitq'.padStart(9)}  ${'baseline'.padStart(9)}  ${'ratio'.padStart(6)}  unit     target`);
for (const r of results) {
  console.log(
    `${r.name.padEnd(width)}  ${r.fitq.toFixed(2).padStart(9)}  ${r.baseline.toFixed(2).padStart(9)}  ${`${r.ratio.toFixed(2)}×`.padStart(6)}  ${r.unit.padEnd(7)}  ${r.target}`,
  );
}
for (const note of notes) console.log(`\n${note}`);
process.exit(0);
