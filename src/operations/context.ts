/**
 * What every operation works with: one namespace's keys, over one Redis
 * connection, with the typed calls of its scripts. FitqClient makes one
 * when it connects; each operation (operations/<name>.ts) is a set of plain
 * functions taking it first, as graphile-worker's src/sql/*.ts take a
 * client, so an operation is called, and tested, without FitqClient.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { NamespaceKeys } from '../queue/keys.js';
import { Scripts } from '../queue/scripts.js';
import type { ReplicaWait } from '../redis/replica-wait.js';
import type { KeyObject } from 'node:crypto';
import type { Stager } from '../model/stager.js';

export interface QueueContext {
  /** The command connection; fails fast when Redis is down. */
  readonly redis: RedisConnection;
  readonly keys: NamespaceKeys;
  readonly scripts: Scripts;
  /** The shared secret: runs staged are signed with it, signed runs edited are signed anew (none: neither). */
  readonly secret: Uint8Array | undefined;
  /** Who stages through this context: recorded on every run it stages. */
  readonly stager: Stager;
  /** The stager's own key (security/user-keys.ts): runs staged are signed with it too (none: not). */
  readonly userKey?: KeyObject | undefined;
  /** Whether this client may do upkeep (reaping, reconciling): see upkeep.ts. */
  readonly upkeep: UpkeepState;
  /** Replicas that must confirm staged runs before they count as staged (--redis-wait-replicas), if any. */
  readonly replicaWait?: ReplicaWait | undefined;
  /**
   * A context over a connection of its own that survives Redis restarts,
   * for a read that holds its connection (XREAD BLOCK, SUBSCRIBE); its
   * `redis` is the caller's to close (closeRedis). It shares `upkeep`.
   */
  readonly connect: () => Promise<QueueContext>;
}

/** What a read of plain keys needs (FitqClient has both too). */
export type ReadContext = Pick<QueueContext, 'redis' | 'keys'>;

/** Set once Redis refused this user EVAL: upkeep is skipped from then on, and `onNote` heard it once. */
export interface UpkeepState {
  refused: boolean;
  readonly onNote?: ((note: string) => void) | undefined;
}

export interface ContextOptions {
  redis: RedisConnection;
  keys: NamespaceKeys;
  /** Lines of output kept per run (the scripts trim each run's output to it). */
  logMaxLines: number;
  secret: Uint8Array | undefined;
  stager: Stager;
  userKey?: KeyObject | undefined;
  /** Opens a connection that survives RedisConnection restarts (connectRedis(…, true)). */
  connectResilient: () => Promise<RedisConnection>;
  onNote?: ((note: string) => void) | undefined;
  replicaWait?: ReplicaWait | undefined;
}

export function createContext(options: ContextOptions): QueueContext {
  const { keys, logMaxLines, secret } = options;
  const upkeep: UpkeepState = { refused: false, onNote: options.onNote };
  const over = (redis: RedisConnection): QueueContext => ({
    redis,
    keys,
    scripts: new Scripts(redis, keys, logMaxLines),
    secret,
    stager: options.stager,
    userKey: options.userKey,
    upkeep,
    replicaWait: options.replicaWait,
    connect: async () => over(await options.connectResilient()),
  });
  return over(options.redis);
}
