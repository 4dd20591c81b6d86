/**
 * A real Redis Cluster for tests: six redis-server processes on free ports
 * (3 masters, 3 replicas, cluster-node-timeout 2000), created with
 * `redis-cli --cluster create`. Ready once every node says cluster_state:ok
 * and knows all six, and each replica replicates its master.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import calculateSlot from 'cluster-key-slot';
import { freePort } from './redis-server.js';
import { askNode, drainReplication, pollUntil, startRedisNode, type RedisNode } from './redis-node.js';

export const CLUSTER_NODE_TIMEOUT_MS = 2000;

export interface RedisClusterTopology {
  /** `redis+cluster://127.0.0.1:P1,…` naming every node. */
  readonly url: string;
  readonly nodes: readonly RedisNode[];
  /** The node that serves `key`'s slot now. */
  masterOf(key: string): Promise<RedisNode>;
  /** The masters now, in slot order. */
  masters(): Promise<RedisNode[]>;
  /**
   * Kills the master of `key`'s slot -9 and waits until its replica serves
   * the slot; returns the new master. `caughtUp`: first let the replica have
   * every write the master took (drainReplication).
   */
  failover(key: string, options?: { caughtUp?: boolean }): Promise<RedisNode>;
  dispose(): Promise<void>;
}

/** The port of the master that serves `slot`, by CLUSTER SLOTS as the node at askPort sees it. */
async function slotOwner(askPort: number, slot: number): Promise<number | undefined> {
  const slots = (await askNode(askPort, (r) => r.call('CLUSTER', 'SLOTS'))) as [number, number, [string, number]][];
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  return range ? Number(range[2][1]) : undefined;
}

/** The hash slot of a key (by its `{hash tag}`, as fitq's namespace keys share one). */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

export async function startRedisCluster(): Promise<RedisClusterTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-cluster-'));
  const nodes: RedisNode[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freePort();
      nodes.push(
        await startRedisNode(port, [
          '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
          '--dbfilename', `dump-${port}.rdb`, '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
          '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS),
        ]),
      );
    }
    await promisify(execFile)('redis-cli', [
      '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes',
    ]);
    for (const node of nodes) {
      await pollUntil(`node ${node.port} to see the cluster whole`, () =>
        askNode(node.port, async (r) => {
          const info = String(await r.call('CLUSTER', 'INFO'));
          return /cluster_state:ok/.test(info) && /cluster_known_nodes:6/.test(info) ? true : undefined;
        }),
      );
    }
    // A replica takes over only once it replicates its master: `--cluster create` makes it one after the
    // cluster is whole, and a master killed before then has no one to take its slots.
    await pollUntil('every replica to replicate its master', async () => {
      const linked = await Promise.all(
        nodes.map((node) => askNode(node.port, async (r) => /^role:slave$/m.test(await r.info('replication')) && /master_link_status:up/.test(await r.info('replication')))),
      );
      return linked.filter(Boolean).length === nodes.length / 2 ? true : undefined;
    });
    const nodeAt = (port: number) => {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`the cluster names 127.0.0.1:${port}, which is no node of it`);
      return node;
    };
    const askPort = () => {
      const node = nodes.find((n) => n.alive);
      if (!node) throw new Error('no cluster node is running');
      return node.port;
    };
    const cluster: RedisClusterTopology = {
      url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
      nodes,
      async masterOf(key) {
        const port = await slotOwner(askPort(), slotOf(key));
        if (port === undefined) throw new Error(`no node serves the slot of ${key}`);
        return nodeAt(port);
      },
      async masters() {
        const slots = (await askNode(askPort(), (r) => r.call('CLUSTER', 'SLOTS'))) as [number, number, [string, number]][];
        return slots.sort((a, b) => a[0] - b[0]).map((range) => nodeAt(Number(range[2][1])));
      },
      async failover(key, options = {}) {
        const old = await cluster.masterOf(key);
        if (options.caughtUp) await drainReplication(old.port);
        await old.kill();
        const slot = slotOf(key);
        return pollUntil(
          `a replica to take over the slot of ${key}`,
          async () => {
            const port = await slotOwner(askPort(), slot);
            if (port === undefined || port === old.port) return undefined;
            const info = await askNode(port, (r) => r.call('CLUSTER', 'INFO'));
            return /cluster_state:ok/.test(String(info)) ? nodeAt(port) : undefined;
          },
          60_000,
        );
      },
      async dispose() {
        await Promise.all(nodes.map((n) => n.kill()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return cluster;
  } catch (error) {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
