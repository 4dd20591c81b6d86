/**
 * Says when a worker loses Redis and when it has it back: one warning when the
 * connection drops, one line once it is ready again, and nothing in between
 * however long it stays down (the connection retries by itself meanwhile, and
 * commands wait for it). Once it is back, `onReconnected` is called: the
 * server may be a replica that took over without the last writes. On a
 * Redis Cluster the connection as a whole stays up while a master dies and
 * its replica takes over: there a node connection that ended, followed by a
 * fresh map of the slots, counts as coming back.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { Logger } from 'pino';

/** Starts watching; returns a function that stops it (before closing the connection on purpose). */
export function watchConnection(redis: RedisConnection, logger: Logger, onReconnected: () => void = () => undefined): () => void {
  let downSince: number | undefined;
  let warned = false;
  /** A connection error seen since the connection was last ready. */
  let lastError: Error | undefined;

  const warn = (error: Error) => {
    if (warned) return;
    warned = true;
    logger.warn(`Redis unreachable (${error.message}), retrying`);
  };
  const onError = (error: Error) => {
    lastError = error;
    if (downSince !== undefined) warn(error);
  };
  // A server that shuts down closes the connection without an error: the
  // first failed reconnect then says why it stays down.
  const onClose = () => {
    downSince ??= Date.now();
    if (lastError) warn(lastError);
  };
  const onReady = () => {
    const wasDown = downSince !== undefined;
    if (downSince !== undefined) logger.info(`Redis reconnected after ${((Date.now() - downSince) / 1000).toFixed(1)}s`);
    downSince = undefined;
    warned = false;
    lastError = undefined;
    if (wasDown) onReconnected();
  };
  let nodeEnded = false;
  const onNodeEnded = () => (nodeEnded = true);
  const onSlotsRefreshed = () => {
    if (!nodeEnded) return;
    nodeEnded = false;
    onReconnected();
  };
  redis.on('error', onError);
  redis.on('close', onClose);
  redis.on('ready', onReady);
  redis.on('-node', onNodeEnded);
  redis.on('refresh', onSlotsRefreshed);
  return () => {
    redis.off('-node', onNodeEnded);
    redis.off('refresh', onSlotsRefreshed);
    redis.off('error', onError);
    redis.off('close', onClose);
    redis.off('ready', onReady);
  };
}
