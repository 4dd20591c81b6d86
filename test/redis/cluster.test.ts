/**
 * fitq on a real 6-node Redis Cluster, through a redis+cluster:// URL: three
 * namespaces whose hash tags fall on three different masters, a CLI worker
 * in each, the CLI read and follow commands (Ctrl-C interrupts a blocked
 * read on the node that serves the namespace), and the refusals.
 */
import { createServer, type Server } from 'node:net';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PREFIX, namespaceKeys } from '../../src/queue/keys.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { BIN, fitq, newQueue, redisUrl } from '../support/fitq.js';
import { startRedisCluster, type RedisClusterTopology } from '../support/redis-cluster.js';
import { askNode, type RedisNode } from '../support/redis-node.js';
import { waitFor } from '../support/wait.js';

let cluster: RedisClusterTopology;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.dispose();
});

const baseOf = (queue: string) => namespaceKeys(queue, process.env.FITQ_PREFIX || DEFAULT_PREFIX).base;

/** Namespaces, one served by each master of the cluster. */
async function namespacesOnEveryMaster(): Promise<{ queue: string; master: RedisNode }[]> {
  const masters = await cluster.masters();
  const chosen = new Map<RedisNode, string>();
  while (chosen.size < masters.length) {
    const queue = newQueue();
    const master = await cluster.masterOf(baseOf(queue));
    if (!chosen.has(master)) chosen.set(master, queue);
  }
  return [...chosen].map(([master, queue]) => ({ queue, master }));
}

async function keysOn(node: RedisNode, base: string): Promise<number> {
  const redis = node.connect();
  try {
    const [, keys] = await redis.scan('0', 'MATCH', `${base}*`, 'COUNT', 100_000);
    return keys.length;
  } finally {
    redis.disconnect();
  }
}

describe('Redis Cluster (redis+cluster://)', () => {
  it('runs three namespaces on three masters, a CLI worker in each; each namespace keeps its keys on its own master', async () => {
    const spread = await namespacesOnEveryMaster();
    const env = { FITQ_REDIS_URL: cluster.url };
    const staged = new Map<string, string[]>();
    for (const { queue } of spread) {
      const result = await fitq(['stage', '-r', 'cpu=1', '--array', '0-4', '--', 'sh', '-c', `echo ${queue}-{index}`], { queue, env });
      expect(result.exitCode, result.stderr).toBe(0);
      staged.set(queue, [result.stdout.trim()]);
    }
    const workers = spread.map(({ queue }) => spawnCliWorker(queue, ['-r', 'cpu=2', '--run-once'], cluster.url));
    for (const worker of workers) expect(await worker.exited, worker.stderr()).toMatchObject({ exitCode: 0 });

    for (const { queue, master } of spread) {
      const runs = await fitq(['runs', '--expand', '--json'], { queue, env });
      expect(runs.exitCode, runs.stderr).toBe(0);
      const listed = (JSON.parse(runs.stdout) as { runs: { id: string; status: string }[] }).runs;
      expect(listed.map((run) => run.status)).toEqual(Array(5).fill('completed'));
      const logs = await fitq(['logs', listed[0]!.id], { queue, env });
      expect(logs.stdout.trim()).toMatch(new RegExp(`^${queue}-\\d$`));
      // Every key of the namespace shares its hash tag: all on its master, none elsewhere.
      expect(await keysOn(master, baseOf(queue))).toBeGreaterThan(10);
      for (const other of spread.filter((s) => s.master !== master)) expect(await keysOn(other.master, baseOf(queue))).toBe(0);
    }
  });

  it('Ctrl-C interrupts fitq logs -f at once: the blocked read is unblocked on the node that serves the namespace', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: cluster.url };
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', 'echo started; exec sleep 120'], { queue, env });
    const runId = staged.stdout.trim();
    // A lease long enough that the blocked read would wait long without CLIENT UNBLOCK.
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--lease', '90'], cluster.url);
    await worker.waitForMessage(`Run ${runId} started`);
    const follower = execa('node', [BIN, 'logs', '-f', runId], {
      env: { FITQ_REDIS_URL: cluster.url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
      reject: false,
      buffer: false,
    });
    let printed = '';
    follower.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    await waitFor('logs -f printing', () => printed.includes('started'));
    follower.kill('SIGINT');
    await waitFor('logs -f to exit on Ctrl-C', () => follower.exitCode !== null);
    expect((await follower).exitCode).toBe(130);
  });

  it('a worker rides out every node going down: it tries them at a steady pace (it used to spin on them), then runs again once they are back', async () => {
    const queue = newQueue();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'outage'], cluster.url);
    const first = (await fitq(['stage', '-r', 'cpu=1', '--', 'echo', 'before'], { queue, env: { FITQ_REDIS_URL: cluster.url } })).stdout.trim();
    await worker.waitForMessage(`Run ${first} completed`);

    await Promise.all(cluster.nodes.map((node) => node.kill()));
    // In the nodes' place, listeners that take each connection and close it: they count the worker's tries.
    let tries = 0;
    const listeners = await Promise.all(
      cluster.nodes.map(
        (node) =>
          new Promise<Server>((resolve) => {
            const server = createServer((socket) => {
              tries++;
              socket.destroy();
            });
            server.listen(node.port, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    await worker.waitForMessage(/^Redis unreachable/);
    const triesAtNotice = tries;
    // Five seconds of tries: at a steady pace, a few per second per connection; ioredis's own cluster
    // subscriber tried again at once for ever (thousands a second, 300 MB more memory a minute).
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await Promise.all(listeners.map((server) => new Promise((resolve) => server.close(resolve))));
    expect(tries - triesAtNotice).toBeLessThan(300);
    expect(worker.stderr()).not.toMatch(/MaxListenersExceededWarning/);

    await Promise.all(cluster.nodes.map((node) => node.start()));
    const after = await fitq(['stage', '-r', 'cpu=1', '--', 'echo', 'after'], { queue, env: { FITQ_REDIS_URL: cluster.url } });
    expect(after.exitCode, after.stderr).toBe(0);
    await worker.waitForMessage(`Run ${after.stdout.trim()} completed`, 60_000);
  });

  it('refuses a seed that is no cluster node and a database other than 0, in one line (exit 2); no node reachable is exit 1', async () => {
    const queue = newQueue();
    const plain = cluster.nodes[0]!.port;
    const notCluster = await fitq(['runs'], { queue, env: { FITQ_REDIS_URL: `redis+cluster://127.0.0.1:${new URL(redisUrl()).port}` } });
    expect(notCluster.exitCode).toBe(2);
    expect(notCluster.stderr.trim()).toMatch(/^Error: 127\.0\.0\.1:\d+ is not a Redis Cluster node \(cluster support is disabled there\)/);
    const db = await fitq(['runs'], { queue, env: { FITQ_REDIS_URL: `redis+cluster://127.0.0.1:${plain}/2` } });
    expect(db.exitCode).toBe(2);
    expect(db.stderr.trim()).toBe(`Error: invalid Redis URL 'redis+cluster://127.0.0.1:${plain}/2': a Redis Cluster has only database 0, not '2'`);
    const none = await fitq(['runs'], { queue, env: { FITQ_REDIS_URL: 'redis+cluster://127.0.0.1:1,127.0.0.1:2' } });
    expect(none.exitCode).toBe(1);
    expect(none.stderr.trim()).toBe('Error: cannot reach any node of cluster 127.0.0.1:1,127.0.0.1:2: connection refused or closed');
    for (const result of [notCluster, db, none]) expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a command whose namespace no node serves through the failover wait says so in one line, exit 1 (the last test: it leaves a slot down)', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: cluster.url };
    // The slot's master and every replica of it killed: no node serves the slot.
    const master = await cluster.masterOf(baseOf(queue));
    const lines = String(await askNode(master.port, (r) => r.call('CLUSTER', 'NODES'))).trim().split('\n').map((line) => line.split(' '));
    const masterId = lines.find((fields) => fields[2]!.includes('myself'))![0]!;
    const replicaPorts = lines.filter((fields) => fields[3] === masterId).map((fields) => Number(/:(\d+)@/.exec(fields[1]!)![1]));
    expect(replicaPorts.length).toBeGreaterThan(0);
    await Promise.all(cluster.nodes.filter((node) => node === master || replicaPorts.includes(node.port)).map((node) => node.kill()));
    const result = await fitq(['runs'], { queue, env, timeoutMs: 120_000 });
    expect(result.stderr.trim()).toMatch(
      /^Error: the Redis Cluster served no answer for the namespace within 30s \(the master of its slot and every replica of it may be down; last error: .+\)$/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.exitCode).toBe(1);
  }, 180_000);
});

