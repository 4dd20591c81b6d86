#!/usr/bin/env node
// fitq's main job end to end: stage runs with resource demands, run a worker
// until they are done, show the runs. Uses the Redis named by FITQ_REDIS_URL or
// REDIS_URL, else a throwaway local redis-server of its own.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { redactRedisUrl } from '../dist/redis/connection.js';
import { configuredOrThrowawayRedis } from './local-redis.js';

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
let redis;
try {
  redis = await configuredOrThrowawayRedis();
} catch (error) {
  console.error(`No Redis for the demo: ${error.message}`);
  process.exit(1);
}
const url = redis.url;
const queue = `demo-${Date.now().toString(36)}`;
const env = { ...process.env, FITQ_REDIS_URL: url, FITQ_QUEUE: queue };
console.log(`# Redis: ${redis.throwaway ? `throwaway redis-server at ${url}` : redactRedisUrl(url)}; namespace: ${queue}\n`);

function fitq(args, options = {}) {
  console.log(`$ fitq ${args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ')}`);
  const result = spawnSync('node', [bin, ...args], { env, stdio: 'inherit', ...options });
  console.log();
  return result.status;
}

const job = (name, seconds) => `echo "${name} starts with $FITQ_RESOURCES"; sleep ${seconds}; echo "${name} done"`;
fitq(['stage', '-r', 'gpu=1 mem=8G', '--run-id', `${queue}-train-a`, '--shell', '--', job('train-a', 1)]);
fitq(['stage', '-r', 'gpu=1 mem=8G', '--run-id', `${queue}-train-b`, '--shell', '--', job('train-b', 1)]);
fitq(['stage', '-r', 'gpu=2 mem=16G', '--run-id', `${queue}-train-big`, '--shell', '--', job('train-big', 1)]);
fitq(['stage', '-r', 'cpu=1', '--repeat', '3', '--shell', '--', job('preprocess', 0.5)]);
fitq(['stage', '-r', 'license=1', '--run-id', `${queue}-needs-license`, '--', 'true']);
const status = fitq(['worker', '-r', 'gpu=2 mem=32G cpu=2', '--name', 'demo-worker', '--run-once']);
fitq(['runs']);
if (!redis.throwaway) console.log(`# The runs stay in namespace ${queue}: FITQ_QUEUE=${queue} fitq runs`);
redis.stop();
process.exit(status ?? 1);
