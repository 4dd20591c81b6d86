// A throwaway Redis Cluster for the benchmarks: `masters` redis-server
// processes on free ports (cluster mode, no replicas, no persistence), joined
// with `redis-cli --cluster create`, ready once every node says
// cluster_state:ok and knows them all. `stop()` ends exactly the processes
// it started (and an exit of this process does too).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { answers, freePort } from './local-redis.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks the node at `port` one thing on a connection of its own. */
async function ask(port, command, ...args) {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await redis.call(command, ...args);
  } finally {
    redis.disconnect();
  }
}

/** Waits until `check()` is true, every 50 ms, for at most `ms`. */
async function until(what, check, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Starts a cluster of `masters` masters; resolves with its `redis+cluster://`
 * URL, its nodes ({host, port, pid}), the slot ranges each master serves
 * (`slots()`: [{from, to, port}], from CLUSTER SLOTS) and `stop()`.
 */
export async function throwawayRedisCluster({ masters = 3 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-bench-cluster-'));
  const children = [];
  const killAll = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.removeListener('exit', killAll);
    const exited = children.map((child) =>
      child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)),
    );
    killAll();
    await Promise.all(exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const nodes = [];
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      const child = spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000',
      ], { stdio: 'ignore' });
      children.push(child);
      const failed = new Promise((resolve) => child.once('error', resolve));
      const error = await Promise.race([failed, until(`redis-server on port ${port} to answer`, () => answers(`redis://127.0.0.1:${port}`))]);
      if (error) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)');
      nodes.push({ host: '127.0.0.1', port, pid: child.pid });
    }
    await promisify(execFile)('redis-cli', [
      '--cluster', 'create', ...nodes.map((node) => `${node.host}:${node.port}`), '--cluster-replicas', '0', '--cluster-yes',
    ]);
    for (const node of nodes) {
      await until(`node ${node.port} to see the cluster whole`, async () => {
        const info = String(await ask(node.port, 'CLUSTER', 'INFO'));
        return /cluster_state:ok/.test(info) && new RegExp(`cluster_known_nodes:${masters}\\b`).test(info);
      });
    }
    return {
      url: `redis+cluster://${nodes.map((node) => `${node.host}:${node.port}`).join(',')}`,
      nodes,
      async slots() {
        const ranges = await ask(nodes[0].port, 'CLUSTER', 'SLOTS');
        return ranges.map(([from, to, [, port]]) => ({ from: Number(from), to: Number(to), port: Number(port) })).sort((a, b) => a.from - b.from);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
