// Scale: claims per second as workers grow, on one Redis and on a 3-master
// Redis Cluster, and what each claim costs Redis.
//
// Simulated workers of the library API: each has a Redis connection of its
// own and registers as a worker of capacity cpu=1, then loops as a worker's
// claim loop does: the claim script, then (the run of `true` ends at once,
// no process spawned) the finish script recording exit code 0 — the very
// script calls a real worker makes per run of `true` (bench/scale-workers.js).
// 8, 32 and 128 of them, spread over 4 child processes, claim from runs of
// one shape (cpu=1) staged beforehand, enough that the queue never runs dry
// in the timed window (a window in which any claim found nothing is staged
// for again and measured again).
//
// Measured per point, over a timed window after a warm-up: claims per
// second (runs claimed and recorded ended); Redis's CPU (INFO cpu:
// used_cpu_user + used_cpu_sys, and its main thread's) and script time
// (INFO commandstats: EVALSHA's calls and usec) per claim; a short SLOWLOG
// sample afterwards splits the script time into claim and finish. 1 / Redis
// CPU seconds per claim is what one core serving Redis alone could claim.
//
// The baseline, in the same run, with the same processes and connections:
// every simulated worker calls a script that does nothing (EVALSHA of
// `return 0`) as fast as it can: the floor of a round trip to Redis at that
// concurrency, the physical limit of any call rate. A claim is two calls
// (claim and finish), so fitq at 0.5× the no-op rate would mean its scripts
// cost nothing.
//
// Then the same on a Redis Cluster of 3 masters (no replicas): 4 namespaces
// chosen by their hash slot so that every master serves at least one, the
// workers spread evenly over them. On a 2-core machine the 3 masters and the
// 4 load processes share 2 cores, so the measured total cannot show the
// masters' full gain: reported are the measured total, Redis CPU per claim
// on each master, the claims per master-core it implies (claims on that
// master / its CPU seconds), and the total expected from N masters serving
// evenly spread namespaces (N × claims per master-core).
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { FitqClient } from '../dist/index.js';
import { luaScript } from '../dist/queue/lua-source.js';
import { throwawayRedisCluster } from '../scripts/local-redis-cluster.js';

/** Simulated workers per point. */
export const WORKER_COUNTS = (process.env.BENCH_SCALE_WORKERS ?? '8,32,128').split(',').map(Number);
/** Child processes holding them. */
const PROCESSES = Number(process.env.BENCH_SCALE_PROCESSES ?? 4);
/** The timed window of each point (fitq's; the no-op baseline's, steadier, is shorter), and the warm-up before each, in seconds. */
const WINDOW_S = Number(process.env.BENCH_SCALE_SECONDS ?? 5);
const NOOP_WINDOW_S = Math.min(3, WINDOW_S);
const WARMUP_S = 1;
/** How long SLOWLOG records every command after a fitq window (to split claim and finish). */
const SAMPLE_MS = 300;
/** Claims per second assumed before any was measured: what the first point's queue is staged for. */
const FIRST_GUESS = Number(process.env.BENCH_SCALE_FIRST_RATE ?? 2500);
/** Namespaces on the cluster, and its masters. */
const CLUSTER_NAMESPACES = 4;
const CLUSTER_MASTERS = 3;
const WORKER_SCRIPT = fileURLToPath(new URL('./scale-workers.js', import.meta.url));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sum = (values) => values.reduce((total, value) => total + value, 0);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** A child process of bench/scale-workers.js; `ask(message)` resolves with its reply. */
function startChild() {
  const child = fork(WORKER_SCRIPT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = [];
  const failAll = (error) => {
    while (pending.length > 0) pending.shift().reject(error);
  };
  child.on('message', (message) => {
    if (message.type === 'error') failAll(new Error(`a scale worker process failed: ${message.message}`));
    else pending.shift()?.resolve(message);
  });
  child.on('exit', (code, signal) => failAll(new Error(`a scale worker process exited (${signal ?? code})`)));
  return {
    ask: (message) =>
      new Promise((resolve, reject) => {
        pending.push({ resolve, reject });
        child.send(message);
      }),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}

/** A Redis node's CPU seconds (process, main thread) and script calls and µs, read together. */
async function nodeStats(redis) {
  const info = await redis.info('cpu', 'commandstats');
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  const scripts = [...info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)];
  return {
    cpu: field('used_cpu_user') + field('used_cpu_sys'),
    mainCpu: field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread'),
    calls: sum(scripts.map((m) => Number(m[1]))),
    usec: sum(scripts.map((m) => Number(m[2]))),
  };
}

/** Everything counted at one moment: the children's counts and every node's stats. */
async function mark(children, nodes) {
  const [counts, stats] = await Promise.all([Promise.all(children.map((child) => child.ask({ type: 'count' }))), Promise.all(nodes.map((node) => nodeStats(node.redis)))]);
  const done = {};
  const other = {};
  for (const count of counts) {
    for (const [queue, n] of Object.entries(count.done)) done[queue] = (done[queue] ?? 0) + n;
    for (const [code, n] of Object.entries(count.other)) other[code] = (other[code] ?? 0) + n;
  }
  return { at: performance.now(), done, other, clientCpu: sum(counts.map((count) => count.cpu)), stats };
}

/** The claim and finish scripts' p50 (µs) on each node, from SLOWLOG recording every command for SAMPLE_MS. */
async function sampleScriptTimes(nodes) {
  const shas = { claim: luaScript('claimRun').sha, finish: luaScript('finishRun').sha };
  await Promise.all(nodes.map(async ({ redis }) => {
    await redis.config('SET', 'slowlog-max-len', '100000');
    await redis.call('SLOWLOG', 'RESET');
    await redis.config('SET', 'slowlog-log-slower-than', '0');
  }));
  await sleep(SAMPLE_MS);
  return Promise.all(nodes.map(async ({ redis }) => {
    await redis.config('SET', 'slowlog-log-slower-than', '10000');
    const entries = await redis.call('SLOWLOG', 'GET', '-1');
    await redis.call('SLOWLOG', 'RESET');
    await redis.config('SET', 'slowlog-max-len', '128');
    const timesOf = (sha) => entries.filter(([, , , args]) => /^evalsha$/i.test(String(args[0])) && String(args[1]) === sha).map(([, , micros]) => Number(micros));
    return { claim: median(timesOf(shas.claim)), finish: median(timesOf(shas.finish)) };
  }));
}

/**
 * One timed window: the children loop in `mode` for the warm-up, then the
 * window; returns what the marks at its two ends differ by.
 */
async function timedWindow(children, nodes, mode, windowSeconds, sample) {
  await Promise.all(children.map((child) => child.ask({ type: 'go', mode })));
  await sleep(WARMUP_S * 1000);
  const load = loadavg()[0];
  const first = await mark(children, nodes);
  await sleep(windowSeconds * 1000);
  const last = await mark(children, nodes);
  const scriptTimes = sample ? await sampleScriptTimes(nodes) : undefined;
  const halted = await Promise.all(children.map((child) => child.ask({ type: 'halt' })));
  const seconds = (last.at - first.at) / 1000;
  const doneIn = (queue) => (last.done[queue] ?? 0) - (first.done[queue] ?? 0);
  const dry = Object.entries(last.other).filter(([code, n]) => n > (first.other[code] ?? 0)).map(([code, n]) => `${code} ${n - (first.other[code] ?? 0)}`);
  const claimedAll = {};
  for (const { done } of halted) for (const [queue, n] of Object.entries(done)) claimedAll[queue] = (claimedAll[queue] ?? 0) + n;
  return {
    seconds,
    load,
    done: Object.fromEntries(Object.keys(last.done).map((queue) => [queue, doneIn(queue)])),
    total: sum(Object.keys(last.done).map(doneIn)),
    /** Claims made in the whole phase, warm-up and halt included (what was taken from the staged runs). */
    claimedAll,
    dry,
    clientCores: (last.clientCpu - first.clientCpu) / 1e6 / seconds,
    nodes: nodes.map((node, i) => ({
      cpu: last.stats[i].cpu - first.stats[i].cpu,
      mainCpu: last.stats[i].mainCpu - first.stats[i].mainCpu,
      calls: last.stats[i].calls - first.stats[i].calls,
      usec: last.stats[i].usec - first.stats[i].usec,
      scriptTimes: scriptTimes?.[i],
    })),
  };
}

/**
 * Stages runs of `true` (cpu=1) so each namespace holds at least
 * `need[queue]` staged runs; `stock` tracks what each holds.
 */
async function stock(clients, stockByQueue, need) {
  await Promise.all(
    Object.entries(need).map(async ([queue, wanted]) => {
      let missing = Math.ceil(wanted - stockByQueue[queue]);
      while (missing > 0) {
        const repeat = Math.min(missing, 100_000);
        await clients[queue].stage({ command: ['true'], resources: 'cpu=1', repeat });
        stockByQueue[queue] += repeat;
        missing -= repeat;
      }
    }),
  );
}

/**
 * One point: `count` workers (worker i in namespace i mod the namespaces,
 * child i mod PROCESSES); the no-op baseline, then fitq (the queue stocked
 * for half again the best rate seen so far).
 */
async function point({ url, queues, nodes, clients, stockByQueue, count, label, best }) {
  const children = Array.from({ length: Math.min(PROCESSES, count) }, () => startChild());
  try {
    const lists = children.map(() => []);
    for (let i = 0; i < count; i++) lists[i % children.length].push({ name: `${label}-${count}-${i}`, queue: queues[i % queues.length] });
    await Promise.all(children.map((child, i) => child.ask({ type: 'open', url, workers: lists[i] })));
    const noop = await timedWindow(children, nodes, 'noop', NOOP_WINDOW_S, false);
    // Worker i serves namespace i mod the namespaces: each namespace's share of the workers.
    const share = (queue) => (Math.floor(count / queues.length) + (queues.indexOf(queue) < count % queues.length ? 1 : 0)) / count;
    let fitq;
    for (let attempt = 0; ; attempt++) {
      // Staged for half again the best rate so far (the first guess before any), the warm-up, the window and a second more; more after a dry window.
      const rate = Math.max(best.rate, FIRST_GUESS) * 1.5 * 2 ** attempt;
      await stock(clients, stockByQueue, Object.fromEntries(queues.map((queue) => [queue, rate * share(queue) * (WARMUP_S + WINDOW_S + 1)])));
      fitq = await timedWindow(children, nodes, 'fitq', WINDOW_S, true);
      for (const [queue, n] of Object.entries(fitq.claimedAll)) stockByQueue[queue] -= n;
      best.rate = Math.max(best.rate, fitq.total / fitq.seconds);
      if (fitq.dry.length === 0 || attempt === 2) break;
    }
    await Promise.all(children.map((child) => child.ask({ type: 'close' })));
    return { count, noop, fitq };
  } finally {
    for (const child of children) child.kill();
  }
}

/** Per node: claims in the window of the namespaces it serves, Redis CPU per claim, claims per core. */
function perNode(fitq, nodes) {
  return nodes.map((node, i) => {
    const claims = sum(node.queues.map((queue) => fitq.done[queue] ?? 0));
    const { cpu, mainCpu, calls, usec, scriptTimes } = fitq.nodes[i];
    return {
      name: node.name,
      queues: node.queues,
      claims,
      claimsPerSecond: claims / fitq.seconds,
      cores: cpu / fitq.seconds,
      mainCores: mainCpu / fitq.seconds,
      cpuMicrosPerClaim: (cpu / claims) * 1e6,
      mainMicrosPerClaim: (mainCpu / claims) * 1e6,
      scriptMicrosPerClaim: usec / claims,
      callsPerClaim: calls / claims,
      mainCpu,
      perCore: claims / mainCpu,
      scriptTimes,
    };
  });
}

/** Runs every point on a topology; returns the points with per-node figures. */
async function topology({ url, queues, nodes, label }) {
  const clients = {};
  const stockByQueue = {};
  for (const queue of queues) {
    clients[queue] = await FitqClient.connect({ redisUrl: url, queue });
    stockByQueue[queue] = 0;
  }
  const best = { rate: 0 };
  try {
    const points = [];
    for (const count of WORKER_COUNTS) {
      const measured = await point({ url, queues, nodes, clients, stockByQueue, count, label, best });
      points.push({ ...measured, nodes: perNode(measured.fitq, nodes) });
    }
    return points;
  } finally {
    for (const client of Object.values(clients)) await client.close();
  }
}

/**
 * `count` namespace names whose hash slots land on every master (`slots`:
 * CLUSTER SLOTS as [{from, to, port}]), as evenly as they divide: the first
 * names `team-0`, `team-1`, … whose master still has room.
 */
export function spreadNamespaces(count, slots) {
  const ports = [...new Set(slots.map((range) => range.port))];
  const room = new Map(ports.map((port, i) => [port, Math.floor(count / ports.length) + (i < count % ports.length ? 1 : 0)]));
  const chosen = [];
  for (let i = 0; chosen.length < count; i++) {
    const name = `team-${i}`;
    const slot = calculateSlot(`{${name}}`);
    const port = slots.find((range) => slot >= range.from && slot <= range.to).port;
    if (room.get(port) > 0) {
      room.set(port, room.get(port) - 1);
      chosen.push({ name, slot, port });
    }
  }
  return chosen;
}

/**
 * The scale case: one Redis at `url` (one namespace from `newQueue()`),
 * then a throwaway 3-master cluster with 4 namespaces.
 */
export async function scale(url, newQueue) {
  const single = new Redis(url);
  let one;
  try {
    const queue = newQueue();
    one = await topology({ url, queues: [queue], nodes: [{ name: url.replace(/^redis:\/\//, ''), redis: single, queues: [queue] }], label: 'one' });
  } finally {
    single.disconnect();
  }
  const cluster = await throwawayRedisCluster({ masters: CLUSTER_MASTERS });
  const nodes = [];
  try {
    const namespaces = spreadNamespaces(CLUSTER_NAMESPACES, await cluster.slots());
    for (const node of cluster.nodes) {
      nodes.push({
        name: `${node.host}:${node.port}`,
        redis: new Redis({ host: node.host, port: node.port }),
        queues: namespaces.filter((namespace) => namespace.port === node.port).map((namespace) => namespace.name),
      });
    }
    const queues = namespaces.map((namespace) => namespace.name);
    const clustered = await topology({ url: cluster.url, queues, nodes, label: 'cluster' });
    return { one, cluster: clustered, namespaces, masters: CLUSTER_MASTERS, processes: PROCESSES, windowSeconds: WINDOW_S, noopWindowSeconds: NOOP_WINDOW_S };
  } finally {
    for (const node of nodes) node.redis.disconnect();
    await cluster.stop();
  }
}
