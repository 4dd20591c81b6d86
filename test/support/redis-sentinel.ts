/**
 * A real Sentinel group for tests, on free ports: one master, one replica and
 * three sentinels (quorum 2, down-after-milliseconds 2000), each its own
 * redis-server process (a sentinel is `redis-server CONF --sentinel`, so
 * Debian's redis-server package is enough). Ready once the replica has
 * synced and every sentinel knows the replica and the two other sentinels.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';
import { askNode, drainReplication, pollUntil, startRedisNode, waitForReplicas, type RedisNode } from './redis-node.js';

export const SENTINEL_DOWN_AFTER_MS = 2000;

export interface SentinelGroup {
  readonly masterName: string;
  /** `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/mymaster` */
  readonly url: string;
  /** The data nodes (the first started as master) and the sentinels. */
  readonly nodes: readonly RedisNode[];
  readonly sentinels: readonly RedisNode[];
  /** The data node the sentinels now name as master. */
  master(): Promise<RedisNode>;
  /** The data node that is not the master. */
  replica(): Promise<RedisNode>;
  /**
   * Kills the master -9 and waits until the sentinels have promoted the
   * replica and told it so (it answers as a master); returns the new master.
   * `caughtUp`: first let the replica have every write the master took
   * (drainReplication), so the failover loses nothing.
   */
  failover(options?: { caughtUp?: boolean }): Promise<RedisNode>;
  /**
   * A failover that loses writes the master acknowledged: once the replica
   * has caught up, it is frozen and the master drops its link (so nothing
   * more reaches it, not even from kernel buffers), `meanwhile` writes what
   * will be lost, the master is killed -9 and the replica thawed and
   * promoted. Returns the new master.
   */
  failoverLosing(meanwhile: () => Promise<void>): Promise<RedisNode>;
  /** Starts a killed data node again, as a replica of the master from its first moment. */
  revive(node: RedisNode): Promise<void>;
  dispose(): Promise<void>;
}

async function masterPortOf(sentinelPort: number, masterName: string): Promise<number> {
  const reply = (await askNode(sentinelPort, (r) => r.call('SENTINEL', 'get-master-addr-by-name', masterName))) as [string, string] | null;
  if (!reply) throw new Error(`sentinel on ${sentinelPort} knows no master ${masterName}`);
  return Number(reply[1]);
}

/** A flat [k, v, k, v…] reply as a map. */
function pairs(reply: unknown): Map<string, string> {
  const list = reply as string[];
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < list.length; i += 2) map.set(list[i]!, list[i + 1]!);
  return map;
}

export async function startSentinelGroup(masterName = 'mymaster'): Promise<SentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-sentinel-'));
  const started: RedisNode[] = [];
  const dataArgs = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`];
  try {
    const masterPort = await freePort();
    const master = await startRedisNode(masterPort, dataArgs(masterPort));
    started.push(master);
    const replicaPort = await freePort();
    const replica = await startRedisNode(replicaPort, [...dataArgs(replicaPort), '--replicaof', '127.0.0.1', String(masterPort)]);
    started.push(replica);
    await pollUntil('the replica to sync', () =>
      askNode(replicaPort, async (r) => (/master_link_status:up/.test(await r.info('replication')) ? true : undefined)),
    );

    const sentinels: RedisNode[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${masterName} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${masterName} 10000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = await startRedisNode(port, [conf, '--sentinel']);
      sentinels.push(sentinel);
      started.push(sentinel);
    }
    for (const sentinel of sentinels) {
      await pollUntil(`sentinel ${sentinel.port} to know the replica and the other sentinels`, () =>
        askNode(sentinel.port, async (r) => {
          const state = pairs(await r.call('SENTINEL', 'master', masterName));
          return state.get('num-slaves') === '1' && state.get('num-other-sentinels') === '2' ? true : undefined;
        }),
      );
    }

    const nodes = [master, replica];
    const nodeAt = (port: number) => {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`the sentinels name 127.0.0.1:${port}, which is no node of this group`);
      return node;
    };
    const liveSentinel = () => {
      const sentinel = sentinels.find((s) => s.alive);
      if (!sentinel) throw new Error('no sentinel is running');
      return sentinel.port;
    };
    const group: SentinelGroup = {
      masterName,
      url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${masterName}`,
      nodes,
      sentinels,
      master: async () => nodeAt(await masterPortOf(liveSentinel(), masterName)),
      replica: async () => {
        const master = await group.master();
        return nodes.find((n) => n !== master)!;
      },
      async failover(options = {}) {
        const old = await group.master();
        if (options.caughtUp) await drainReplication(old.port);
        await old.kill();
        const promoted = await pollUntil(
          'the sentinels to promote the replica',
          async () => {
            const port = await masterPortOf(liveSentinel(), masterName);
            return port !== old.port ? nodeAt(port) : undefined;
          },
          60_000,
        );
        await pollUntil('the promoted replica to act as master', () =>
          askNode(promoted.port, async (r) => (/^role:master/m.test(await r.info('replication')) ? true : undefined)),
        );
        return promoted;
      },
      async failoverLosing(meanwhile) {
        const old = await group.master();
        const replica = await group.replica();
        await waitForReplicas(old.port);
        replica.freeze();
        try {
          await askNode(old.port, (r) => r.call('CLIENT', 'KILL', 'TYPE', 'replica'));
          await meanwhile();
          await old.kill();
        } finally {
          replica.thaw();
        }
        await pollUntil(
          'the sentinels to promote the replica',
          async () => ((await masterPortOf(liveSentinel(), masterName)) === replica.port ? true : undefined),
          60_000,
        );
        await pollUntil('the promoted replica to act as master', () =>
          askNode(replica.port, async (r) => (/^role:master/m.test(await r.info('replication')) ? true : undefined)),
        );
        return replica;
      },
      async revive(node) {
        // As a replica of the master from its first moment, as a host brought back is: started as it was (a master,
        // empty), a client asking a sentinel that has not yet heard of the failover would be sent to it, and find
        // nothing there (its registration gone), then the real master (its registration under an older token).
        const master = await group.master();
        await node.start(['--replicaof', '127.0.0.1', String(master.port)]);
      },
      async dispose() {
        await Promise.all(started.map((n) => n.kill()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return group;
  } catch (error) {
    await Promise.all(started.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
