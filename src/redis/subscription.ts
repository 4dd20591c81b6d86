/**
 * A SUBSCRIBE on a connection of its own, kept up across reconnects. On one
 * Redis (or Sentinel's master) it is a duplicate of the connection, which
 * reconnects and resubscribes by itself. On a cluster a message published to
 * any node reaches every node, so any node will do; but ioredis's own cluster
 * subscriber tries another node at once, for ever, when one ends: with every
 * node down a worker span a core and grew by 300 MB a minute. Here the
 * subscription is a plain connection to the node that serves the channel's
 * slot, and after it ends another one a second later.
 */
import { Cluster, Redis } from 'ioredis';
import { disconnectForGood, keepConnecting } from './open-connections.js';
import { nodeServing, type RedisConnection } from './nodes.js';

export interface Subscription {
  /** Ends it at once (a subscriber has nothing to flush). */
  close(): void;
}

export interface SubscriptionHandlers {
  message(message: string): void;
  /** Subscribed again after a disconnection (messages meanwhile were missed). */
  ready(): void;
}

/** How long a cluster subscription waits before it tries a node again. */
const CLUSTER_RESUBSCRIBE_MS = 1000;

/** Subscribes to `channel`; resolves once the first SUBSCRIBE is answered. */
export async function subscribe(redis: RedisConnection, channel: string, handlers: SubscriptionHandlers): Promise<Subscription> {
  if (redis instanceof Cluster) return subscribeOnCluster(redis, channel, handlers);
  // Unnamed: BullMQ would list a worker's named connections as workers, and this is not another one.
  const subscriber = redis.duplicate({ connectionName: undefined });
  subscriber.on('error', () => {});
  subscriber.on('message', (_channel: string, message: string) => handlers.message(message));
  // Connected again after ioredis ended it (keepConnecting): subscribed again, as ioredis does after its own reconnects.
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).catch(() => undefined);
    handlers.ready();
  });
  keepConnecting(subscriber);
  await subscriber.subscribe(channel);
  return { close: () => disconnectForGood(subscriber) };
}

async function subscribeOnCluster(cluster: Cluster, channel: string, handlers: SubscriptionHandlers): Promise<Subscription> {
  let closed = false;
  let current: Redis | undefined;
  let timer: NodeJS.Timeout | undefined;
  let address: { host?: string | undefined; port?: number | undefined } = {};
  const open = (): Promise<void> => {
    try {
      const { host, port } = nodeServing(cluster, channel).options;
      address = { host, port };
    } catch {
      // The cluster knows no node now (all unreachable): the last one again.
    }
    const subscriber = new Redis({
      ...cluster.options.redisOptions,
      ...address,
      connectionName: undefined,
      lazyConnect: true,
      // Ended, it is replaced (on another node if the cluster moved the slot).
      retryStrategy: () => null,
    });
    current = subscriber;
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, message: string) => handlers.message(message));
    subscriber.once('end', () => {
      if (closed || current !== subscriber) return;
      timer = setTimeout(() => {
        // A later subscription says it is ready: whatever was published meanwhile was missed.
        open().then(() => handlers.ready(), () => undefined);
      }, CLUSTER_RESUBSCRIBE_MS);
    });
    return subscriber
      .connect()
      .then(() => subscriber.subscribe(channel))
      .then(() => undefined);
  };
  try {
    await open();
  } catch (error) {
    closed = true;
    current?.disconnect();
    throw error;
  }
  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
      current?.disconnect();
    },
  };
}
