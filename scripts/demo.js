#!/usr/bin/env node
// fitq's main job end to end: stage runs with resource demands, run a worker
// until they are done, show the runs. Uses the configured Redis, or starts a
// throwaway local redis-server when none answers.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const configured = process.env.FITQ_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';

async function answers(url) {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function throwawayRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  child.on('error', () => {
    console.error('No Redis answers at %s and redis-server is not installed (apt-get install redis-server).', configured);
    process.exit(1);
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && !(await answers(url)); i++) await new Promise((r) => setTimeout(r, 25));
  return { url, stop: () => child.kill() };
}

const local = (await answers(configured)) ? undefined : await throwawayRedis();
const url = local?.url ?? configured;
const queue = `demo-${Date.now().toString(36)}`;
const env = { ...process.env, FITQ_REDIS_URL: url, FITQ_QUEUE: queue };
console.log(`# Redis: ${local ? `throwaway redis-server at ${url}` : url}; namespace: ${queue}\n`);

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
local?.stop();
process.exit(status ?? 1);
