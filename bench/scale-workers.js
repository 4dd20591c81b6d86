// A child process of the scale case (bench/scale.js): it holds some of the
// simulated workers, each with a Redis connection of its own, opened as a
// worker opens it (src/redis/connection.ts), and each its own loop. Told by
// its parent over IPC, the loops either claim and finish runs through the
// worker's own script calls (src/queue/scripts.ts: claimRun, then finishRun
// as a run of `true` that exited 0 is recorded: the run "ends at once"), or
// call a script that does nothing (EVALSHA of `return 0`, routed by a key
// of the worker's namespace) as fast as they can: the baseline.
//
// Messages (each answered by one reply of the same type):
//   open {url, workers: [{name, queue}]}  connect every worker
//   go {mode: 'fitq' | 'noop'}             fitq: register each worker (cpu=1), then start the loops
//   count                                  {done: {queue: n}, other: {code: n}, cpu: µs of this process}
//   halt                                   stop the loops (each ends its claim and finish), deregister
//   close                                  close the connections; the process exits
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Scripts } from '../dist/queue/scripts.js';
import { namespaceKeys } from '../dist/queue/keys.js';
import { DEFAULT_LOG_MAX_LINES } from '../dist/model/logs.js';
import { connectRedis } from '../dist/redis/connection.js';
import { closeRedis } from '../dist/redis/open-connections.js';

/** A worker declaring capacity and no --concurrency runs, of the runs that demand nothing, at most this many. */
const BARE = availableParallelism();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let workers = [];
let loops = [];
let halting = false;
const done = {};
const other = {};

async function open({ url, workers: list }) {
  workers = await Promise.all(
    list.map(async ({ name, queue }) => {
      const keys = namespaceKeys(queue);
      const redis = await connectRedis({ redisUrl: url, redisOptions: { connectionName: keys.queue.workerClientName(name) } }, true);
      redis.defineCommand('fitqBenchNoop', { numberOfKeys: 1, lua: 'return 0' });
      return { name, queue, redis, scripts: new Scripts(redis, keys, DEFAULT_LOG_MAX_LINES), noopKey: `${keys.base}bench-noop`, token: '' };
    }),
  );
  for (const { queue } of workers) done[queue] = 0;
}

/** One simulated worker (cpu=1): claims a run, records its end, claims again. */
async function claimLoop(worker) {
  const { name, token, scripts } = worker;
  while (!halting) {
    const result = await scripts.claimRun(name, token, 0, 'backfill', 'pack', {}, BARE);
    if (result.code === 'claimed') {
      const end = await scripts.finishRun({ runId: result.runId, worker: name, token, epoch: result.epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' });
      if (end.outcome === 'recorded') done[worker.queue] += 1;
      else other[`finish ${end.outcome}`] = (other[`finish ${end.outcome}`] ?? 0) + 1;
    } else if (result.code !== 'indexing') {
      // The queue ran dry (idle), or anything else a worker would wait on: counted, and the window is void.
      other[result.code] = (other[result.code] ?? 0) + 1;
      await sleep(20);
    }
  }
}

async function noopLoop(worker) {
  while (!halting) {
    await worker.redis.fitqBenchNoop(worker.noopKey);
    done[worker.queue] += 1;
  }
}

async function go({ mode }) {
  halting = false;
  for (const queue of Object.keys(done)) done[queue] = 0;
  for (const code of Object.keys(other)) delete other[code];
  if (mode === 'fitq') {
    await Promise.all(
      workers.map(async (worker) => {
        worker.token = randomBytes(8).toString('hex');
        const registered = await worker.scripts.registerWorker({
          name: worker.name, token: worker.token, leaseMs: 120_000, concurrency: 0, host: 'bench', pid: process.pid, resources: 'cpu=1',
        });
        if (!registered) throw new Error(`worker name ${worker.name} is taken`);
      }),
    );
  }
  loops = workers.map((worker) => (mode === 'fitq' ? claimLoop(worker) : noopLoop(worker)));
}

async function halt() {
  halting = true;
  await Promise.all(loops);
  loops = [];
  await Promise.all(workers.filter((worker) => worker.token).map((worker) => worker.scripts.deregisterWorker(worker.name, worker.token)));
  for (const worker of workers) worker.token = '';
}

const count = () => {
  const { user, system } = process.cpuUsage();
  return { done: { ...done }, other: { ...other }, cpu: user + system };
};

const handlers = {
  open,
  go,
  count: async () => count(),
  halt: async () => {
    await halt();
    return count();
  },
  close: async () => {
    await Promise.all(workers.map((worker) => closeRedis(worker.redis)));
  },
};

// Its parent gone (the bench ended or failed), it goes too.
process.on('disconnect', () => process.exit(0));

// One message at a time, in order.
let chain = Promise.resolve();
process.on('message', (message) => {
  chain = chain.then(async () => {
    try {
      const reply = await handlers[message.type](message);
      process.send({ type: message.type, ...reply }, () => {
        if (message.type === 'close') process.disconnect();
      });
    } catch (error) {
      process.send({ type: 'error', message: error.stack ?? String(error) });
    }
  });
});
