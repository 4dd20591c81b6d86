/**
 * Live updates, for the dashboard and `fitq top`. The feed listens to
 * fitq's own events for every namespace shown: BullMQ's event stream of
 * its runs (`runs:events`, XREAD BLOCK: staged, started, ended, removed)
 * and fitq's pub/sub channel (workers joining, leaving, draining, holds,
 * the pool). Bursts are gathered into
 * one change per namespace, naming the topics that changed: the dashboard's
 * /events sends it to every open page, whose script re-fetches only the
 * fragments on those topics; `fitq top` reads what it shows again.
 */
import type { RedisConnection } from '../redis/connection.js';
import { connectRedis, type ConnectionOptions } from '../redis/connection.js';
import { closeRedis } from '../redis/open-connections.js';
import type { NamespaceKeys } from '../queue/keys.js';

export const LIVE_TOPICS = ['runs', 'workers', 'pool'] as const;
export type LiveTopic = (typeof LIVE_TOPICS)[number];

export interface LiveChange {
  /** The namespace that changed. */
  queue: string;
  topics: LiveTopic[];
}

/** Changes within this window are sent as one. */
const GATHER_MS = 150;
/** XREAD BLOCK timeout: how long a stop may wait at most is bounded by disconnecting, not by this. */
const BLOCK_MS = 10_000;
/**
 * Heartbeat age and "not responding" are a matter of time passing, which
 * no event announces: workers are re-read this often.
 */
const LIVENESS_REFRESH_MS = 10_000;

/** BullMQ stream events that change what a worker reserves and the pool's use, besides the runs. */
const RESERVING_EVENTS = new Set(['active', 'completed', 'failed', 'canceled', 'lost', 'rejected', 'timeout', 'restaged', 'removed']);

/** Topics of a message on fitq's pub/sub channel (src/queue/lua/includes/publish.lua). */
const PUBSUB_TOPICS: Record<string, LiveTopic[]> = {
  staged: ['runs'],
  cancel: ['runs'],
  dependents: ['runs'],
  ended: ['runs', 'workers', 'pool'],
  workerJoined: ['workers'],
  workerLost: ['workers', 'runs', 'pool'],
  holds: ['workers'],
  // A device became busy, lost or usable again: the device map, and why runs wait.
  gpus: ['workers', 'runs'],
  drain: ['workers'],
  stop: ['workers'],
  pool: ['pool'],
  poolReleased: ['pool'],
};

export type LiveListener = (change: LiveChange) => void;

export class LiveFeed {
  private readonly listeners = new Set<LiveListener>();
  private readonly pending = new Map<string, Set<LiveTopic>>();
  private readonly generations = new Map<LiveTopic, number>();
  private readonly connections: RedisConnection[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private gatherTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly namespaces: readonly NamespaceKeys[]) {}

  /** Listens to every namespace: one subscriber for all, one stream reader each. */
  static async start(connection: ConnectionOptions, namespaces: readonly NamespaceKeys[]): Promise<LiveFeed> {
    const feed = new LiveFeed(namespaces);
    try {
      await feed.subscribe(connection);
      for (const keys of namespaces) feed.readStream(await feed.connect(connection), keys);
    } catch (error) {
      await feed.close();
      throw error;
    }
    feed.timers.push(setInterval(() => namespaces.forEach((keys) => feed.changed(queueOf(keys), ['workers'])), LIVENESS_REFRESH_MS));
    return feed;
  }

  /** Hears every change from now on; returns the way to stop hearing. */
  listen(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timers.forEach((timer) => clearInterval(timer));
    clearTimeout(this.gatherTimer);
    this.listeners.clear();
    // A blocked XREAD would hold QUIT back until it times out: disconnect at once.
    await Promise.all(this.connections.splice(0).map((redis) => (redis.disconnect(), closeRedis(redis))));
  }

  /** Changes heard so far on a topic, in any namespace: what was read before a change is stale after it. */
  generation(topic: LiveTopic): number {
    return this.generations.get(topic) ?? 0;
  }

  /** Records topics that changed; sends them all once the burst is over. */
  changed(queue: string, topics: readonly LiveTopic[]): void {
    if (this.closed || topics.length === 0) return;
    topics.forEach((topic) => this.generations.set(topic, this.generation(topic) + 1));
    const set = this.pending.get(queue) ?? new Set();
    topics.forEach((topic) => set.add(topic));
    this.pending.set(queue, set);
    this.gatherTimer ??= setTimeout(() => {
      this.gatherTimer = undefined;
      const changes = [...this.pending].map(([name, set]) => ({ queue: name, topics: [...set] }));
      this.pending.clear();
      for (const change of changes) for (const listener of this.listeners) listener(change);
    }, GATHER_MS);
  }

  private async connect(connection: ConnectionOptions): Promise<RedisConnection> {
    const redis = await connectRedis(connection, true);
    this.connections.push(redis);
    // Gone (pages should say so rather than show what they kept), and back (anything may have changed meanwhile).
    const everything = () => this.namespaces.forEach((keys) => this.changed(queueOf(keys), LIVE_TOPICS));
    redis.on('close', everything);
    redis.on('ready', everything);
    return redis;
  }

  private async subscribe(connection: ConnectionOptions): Promise<void> {
    const subscriber = await this.connect(connection);
    const byChannel = new Map(this.namespaces.map((keys) => [keys.events, queueOf(keys)]));
    subscriber.on('message', (channel: string, message: string) => {
      const queue = byChannel.get(channel);
      if (queue === undefined) return;
      let type: unknown;
      try {
        type = (JSON.parse(message) as { type?: unknown }).type;
      } catch {
        return; // not fitq's: anyone may publish on the channel
      }
      const topics = typeof type === 'string' && Object.hasOwn(PUBSUB_TOPICS, type) ? PUBSUB_TOPICS[type] : undefined;
      if (topics) this.changed(queue, topics);
    });
    await subscriber.subscribe(...byChannel.keys());
  }

  /** Follows a namespace's BullMQ event stream until closed. */
  private readStream(redis: RedisConnection, keys: NamespaceKeys): void {
    const queue = queueOf(keys);
    const stream = keys.queue.key('events');
    void (async () => {
      let after = '$';
      while (!this.closed) {
        try {
          const reply = await redis.xread('COUNT', 1000, 'BLOCK', BLOCK_MS, 'STREAMS', stream, after);
          for (const [, entries] of reply ?? []) {
            for (const [id, flat] of entries) {
              after = id;
              const event = flat[flat.indexOf('event') + 1];
              this.changed(queue, event !== undefined && RESERVING_EVENTS.has(event) ? LIVE_TOPICS : ['runs']);
            }
          }
        } catch {
          if (this.closed) return;
          // Redis away: the connection reconnects by itself (and announces it); read on from the same place.
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    })();
  }
}

/** The namespace's name, from its keys (`fitq:{NAME}`). */
function queueOf(keys: NamespaceKeys): string {
  return /\{(.*)\}$/.exec(keys.queue.prefix)?.[1] ?? keys.queue.prefix;
}
