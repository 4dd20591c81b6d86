/**
 * Where a command goes that names no key. On one Redis (or Sentinel's
 * master) there is one server; on a cluster ioredis would send it to any
 * node, so a command about the namespace (CLIENT ID / CLIENT UNBLOCK beside
 * an XREAD BLOCK) goes to the node that serves the namespace's slot, and a
 * check about the server (its eviction policy) to every master.
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';

/** A connection to fitq's Redis: one server (standalone or Sentinel's master) or a cluster. */
export type RedisConnection = Redis | Cluster;

/** The server connection that serves `key`: the connection itself, or on a cluster the master of the key's slot. */
export function nodeServing(redis: RedisConnection, key: string): Redis {
  if (!(redis instanceof Cluster)) return redis;
  const owner = redis.slots[calculateSlot(key)]?.[0];
  const masters = redis.nodes('master');
  // Before the cluster told its slots (or while they move), the first master: a command sent there is answered or refused, never lost.
  const node = masters.find((candidate) => `${candidate.options.host}:${candidate.options.port}` === owner) ?? masters[0] ?? redis.nodes()[0];
  if (!node) throw new Error('Connection is closed: no node of the Redis Cluster is known now');
  return node;
}

/** Every server a check about Redis itself must ask: the connection, or each master of a cluster. */
export function serverNodes(redis: RedisConnection): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}
