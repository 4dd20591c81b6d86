/**
 * One redis-server process of a test topology (a Sentinel group's master,
 * replica or sentinel, a cluster's node): started on a given port in a
 * given directory, killed -9 like a host that dies, started again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { waitForPing } from './redis-server.js';

export interface RedisNode {
  readonly port: number;
  /** Whether its process is running. */
  readonly alive: boolean;
  /** A plain connection to this node alone (closed by the caller). */
  connect(): Redis;
  /** Starts it (again) with the same arguments, then `extra` (later ones win); resolves once it answers PING. */
  start(extra?: readonly string[]): Promise<void>;
  /** SIGKILL, as a host that dies: nothing flushed, no goodbye to its clients. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: frozen, its connections open, as a host that hangs. */
  freeze(): void;
  thaw(): void;
}

/** A redis-server on 127.0.0.1:port started with `args` (a config file first, for a sentinel). */
export async function startRedisNode(port: number, args: readonly string[]): Promise<RedisNode> {
  let child: ChildProcess | undefined;
  let output = '';
  const node: RedisNode = {
    port,
    get alive() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    connect: () => new Redis({ host: '127.0.0.1', port, lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => null }),
    async start(extra = []) {
      output = '';
      const started = spawn('redis-server', [...args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
      const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
      started.stdout?.on('data', keep);
      started.stderr?.on('data', keep);
      child = started;
      await waitForPing(port, started, () => output);
    },
    async kill() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
  };
  await node.start();
  return node;
}

/** Polls `check` every 50 ms until it returns a value (not undefined) or `timeoutMs` passes; says what it waited for. */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}

/** Runs `command` on a fresh connection to 127.0.0.1:port and closes it. */
export async function askNode<T>(port: number, command: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await command(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * Lets the master at `masterPort` take no more writes (CLIENT PAUSE WRITE)
 * and waits until its replicas have everything it acknowledged: a failover
 * after this loses nothing, as when a host dies between two writes.
 */
export async function drainReplication(masterPort: number): Promise<void> {
  await askNode(masterPort, (r) => r.call('CLIENT', 'PAUSE', '30000', 'WRITE'));
  await waitForReplicas(masterPort);
}

/**
 * Waits until the master at `masterPort` has a replica online (one just
 * started, or a revived old master, takes a moment to sync) and its
 * replicas have every write it took so far.
 */
export async function waitForReplicas(masterPort: number): Promise<void> {
  const { offset, replicas } = await pollUntil(`the master on ${masterPort} to have a replica online`, () =>
    askNode(masterPort, async (r) => {
      const info = await r.info('replication');
      const online = [...info.matchAll(/^slave\d+:.*port=(\d+),state=online/gm)].map((m) => Number(m[1]));
      return online.length > 0 ? { offset: Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1]), replicas: online } : undefined;
    }),
  );
  for (const port of replicas) {
    await pollUntil(`the replica on ${port} to catch up with offset ${offset}`, () =>
      askNode(port, async (r) => (Number(/^slave_repl_offset:(\d+)/m.exec(await r.info('replication'))?.[1]) >= offset ? true : undefined)),
    );
  }
}
