/**
 * What a FitqClient is opened with (client.ts): the connection, the
 * namespace, the run log's length, the secret, who stages and with which
 * key; and the namespace a client (or a worker, or the dashboard) uses.
 */
import type { ReplicaWait } from './redis/replica-wait.js';
import { DEFAULT_PREFIX, DEFAULT_QUEUE } from './queue/keys.js';
import type { ConnectionOptions } from './redis/connection.js';
import type { Secret } from './security/secret.js';

export interface ClientOptions extends ConnectionOptions {
  /** Namespace; default `FITQ_QUEUE` or "default". */
  queue?: string;
  /** Key prefix; default `FITQ_PREFIX` or "fitq". */
  prefix?: string;
  /** Lines of output kept per run; default 10,000. */
  logMaxLines?: number;
  /**
   * Shared secret (text or bytes): a client signs the runs it stages; a worker
   * refuses, as `rejected`, runs not signed with it. Never logged.
   */
  secret?: Secret;
  /** Who stages through this client (recorded on every run); default FITQ_USER, else the OS user. */
  user?: string;
  /**
   * The stager's own Ed25519 key file (security/user-keys.ts): runs staged
   * are signed with it too. Default FITQ_KEY_FILE, else
   * `$XDG_CONFIG_HOME/fitq/id_ed25519.pem` if it exists; false: none.
   */
  keyFile?: string | false;
  /** Hears, once, that the Redis user may only read, so upkeep was skipped (READ_ONLY_NOTE). */
  onNote?: (note: string) => void;
  /**
   * Replicas that must confirm runs staged before stage() returns
   * (`--redis-wait-replicas`, redis/replica-wait.ts); fewer in time throws
   * UnreplicatedError. None: a failover may lose runs just staged.
   */
  waitReplicas?: ReplicaWait | undefined;
}

export function resolveNamespace(options: ClientOptions): { queue: string; prefix: string } {
  return {
    // An empty --queue is a mistake (refused by validation); an empty variable counts as unset.
    queue: options.queue ?? (process.env.FITQ_QUEUE || DEFAULT_QUEUE),
    prefix: options.prefix ?? (process.env.FITQ_PREFIX || DEFAULT_PREFIX),
  };
}
