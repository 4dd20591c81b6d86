// What --redis-wait-replicas costs. Against a master with one replica on
// this machine (both throwaway redis-servers), the same work with and without
// the setting, in alternating rounds, so a load that comes and goes meets
// both: a CLI worker (`fitq worker --run-once`, as users start it) running
// runs of `true` (WAIT after each claim before the run starts, and after each
// end), and `fitq stage` of one run at a time through the library (WAIT
// before the ids come back). The baseline is the same work without WAIT.
// A replica on another host adds its network round trip to every WAIT.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { FitqClient } from '../dist/index.js';
import { throwawayRedis } from '../scripts/local-redis.js';

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const RUNS = Number(process.env.BENCH_WAIT_RUNS ?? 1000);
const STAGES = Number(process.env.BENCH_WAIT_STAGES ?? 300);
const ROUNDS = Number(process.env.BENCH_WAIT_ROUNDS ?? 3);
const CONCURRENCY = 8;
const WAIT_FLAGS = ['--redis-wait-replicas', '1', '--redis-wait-timeout', '5s'];

let counter = 0;
const newQueue = () => `benchwait${Date.now().toString(36)}${counter++}`;

async function waitForReplica(url) {
  const redis = new Redis(url);
  try {
    for (let i = 0; i < 400; i++) {
      if (/^slave0:.*state=online/m.test(await redis.info('replication'))) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the replica never came online');
  } finally {
    redis.disconnect();
  }
}

/** ms per run: RUNS runs of `true` staged, then a CLI worker until it has run them all. */
async function cliWorker(url, waitFlags) {
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: url, queue });
  await client.stage({ command: ['true'], resources: 'cpu=1', repeat: RUNS });
  await client.close();
  const start = performance.now();
  await execa('node', [BIN, 'worker', '-r', `cpu=${CONCURRENCY}`, '--concurrency', String(CONCURRENCY), '--run-once', '--log-format', 'json', ...waitFlags], {
    env: { FITQ_REDIS_URL: url, FITQ_QUEUE: queue },
    stdout: 'ignore',
    stderr: 'inherit',
  });
  return (performance.now() - start) / RUNS;
}

/** ms per stage call of one run, one call after the other. */
async function stageOneByOne(url, waitReplicas) {
  const client = await FitqClient.connect({ redisUrl: url, queue: newQueue(), ...(waitReplicas ? { waitReplicas } : {}) });
  try {
    await client.stage({ command: ['true'] });
    const start = performance.now();
    for (let i = 0; i < STAGES; i++) await client.stage({ command: ['true'] });
    return (performance.now() - start) / STAGES;
  } finally {
    await client.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Cases as bench/run.js reports them: {name, fitq, baseline, unit, target}, and notes. */
export async function replicaWaitCost() {
  // Their RDB files (a replica's first sync) go to a directory of their own.
  const dir = mkdtempSync(join(tmpdir(), 'fitq-bench-wait-'));
  const master = await throwawayRedis(['--dir', dir]);
  const port = new URL(master.url).port;
  const replica = await throwawayRedis(['--dir', dir, '--replicaof', '127.0.0.1', port]);
  try {
    await waitForReplica(master.url);
    const worker = { plain: [], waiting: [] };
    const staging = { plain: [], waiting: [] };
    for (let round = 0; round < ROUNDS; round++) {
      worker.plain.push(await cliWorker(master.url, []));
      worker.waiting.push(await cliWorker(master.url, WAIT_FLAGS));
      staging.plain.push(await stageOneByOne(master.url, undefined));
      staging.waiting.push(await stageOneByOne(master.url, { replicas: 1, timeoutMs: 5000 }));
    }
    const rounds = (plain, waiting) => plain.map((p, i) => `${p.toFixed(2)}→${waiting[i].toFixed(2)}`).join(', ');
    return {
      cases: [
        {
          name: `CLI worker, ${RUNS} runs of \`true\`, concurrency ${CONCURRENCY}, --redis-wait-replicas 1 vs none (a replica on this host)`,
          fitq: median(worker.waiting), baseline: median(worker.plain), unit: 'ms/run', target: 'cost per run, said in docs',
        },
        {
          name: 'fitq stage of one run, --redis-wait-replicas 1 vs none',
          fitq: median(staging.waiting), baseline: median(staging.plain), unit: 'ms/call', target: 'cost per call, said in docs',
        },
      ],
      notes: [
        `--redis-wait-replicas 1, ${ROUNDS} alternating rounds (ms without → with): CLI worker ${rounds(worker.plain, worker.waiting)} ms/run; ` +
          `stage ${rounds(staging.plain, staging.waiting)} ms/call; median cost ${(median(worker.waiting) - median(worker.plain)).toFixed(2)} ms/run, ` +
          `${(median(staging.waiting) - median(staging.plain)).toFixed(2)} ms/stage`,
      ],
    };
  } finally {
    replica.stop();
    master.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
