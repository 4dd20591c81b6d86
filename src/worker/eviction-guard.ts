/**
 * Whether Redis may evict keys, checked while the worker runs: at start the
 * worker refuses such a Redis (redis/connection.ts), but its policy can change
 * under it (`CONFIG SET maxmemory-policy`, a failover to a replica set up
 * otherwise). Evicted keys are runs that vanish, reservations never given
 * back, a live worker's lease gone. So the worker checks again at every
 * reconnect, before it registers again, and at every poll; while Redis may
 * evict it claims nothing and registers nothing, and says so, at error
 * level, when it starts, every minute it lasts, and once it is over.
 */
import type { Logger } from 'pino';
import { type RedisConnection } from '../redis/connection.js';
import { readEvictionProblem } from '../redis/eviction-policy.js';

/** How often a lasting eviction policy is said again. */
const REPEAT_MS = 60_000;

export class EvictionGuard {
  private problem: string | undefined;
  private saidAt = -Infinity;
  private checking: Promise<string | undefined> | undefined;
  private readonly onReady = () => void this.check();

  constructor(
    private readonly redis: RedisConnection,
    /** The Redis URL as messages show it (no password). */
    private readonly shownUrl: string,
    private readonly logger: Logger,
    /** Told when RedisConnection no longer evicts: claims may go on. */
    private readonly onCleared: () => void,
  ) {
    redis.on('ready', this.onReady);
  }

  /** Whether RedisConnection, when last checked, could evict keys. */
  get evicting(): boolean {
    return this.problem !== undefined;
  }

  /** Checks the policy now (one check at a time); resolves with the problem, if any. */
  check(): Promise<string | undefined> {
    this.checking ??= readEvictionProblem(this.redis, this.shownUrl)
      // INFO refused to the user: nothing to tell, as at start. Unreachable: as it was last seen.
      .catch((error: unknown) => (/\bNOPERM\b/.test((error as Error).message) ? undefined : this.problem))
      .then((problem) => {
        this.checking = undefined;
        this.note(problem);
        return problem;
      });
    return this.checking;
  }

  close(): void {
    this.redis.off('ready', this.onReady);
  }

  private note(problem: string | undefined): void {
    const was = this.problem;
    this.problem = problem;
    if (problem !== undefined) {
      if (was === undefined || performance.now() - this.saidAt >= REPEAT_MS) {
        this.saidAt = performance.now();
        this.logger.error(`${problem}; claiming no runs until it is noeviction again`);
      }
    } else if (was !== undefined) {
      this.logger.info('Redis no longer evicts keys (maxmemory-policy noeviction): claiming runs again');
      this.onCleared();
    }
  }
}
