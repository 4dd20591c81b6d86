/**
 * Retrying a write Redis refused for now (out of memory, a busy script, a
 * failover under way): the worker keeps what it could not record and tries
 * again, waiting longer each time, until Redis takes it, answers that it is
 * no longer this worker's to write, or the worker gives up.
 */

/** First wait after a refused write, and the longest. */
export const RETRY_FIRST_MS = 100;
export const RETRY_MAX_MS = 5_000;

/** The wait before try `attempt` (1 = the first retry): doubling, capped, with up to a fifth of jitter so workers do not retry in step. */
export function retryDelayMs(attempt: number): number {
  const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempt - 1, 20));
  return Math.round(delay * (1 - Math.random() * 0.2));
}

/**
 * Redis's refusals that pass (it is out of memory, busy with a long script,
 * loading its data, a replica or failing over): it refused the script whole,
 * before it ran, so trying again cannot apply anything twice.
 */
const TRANSIENT_REFUSAL = /^(OOM|BUSY|LOADING|TRYAGAIN|READONLY|MASTERDOWN|CLUSTERDOWN|NOREPLICAS)\b/;

/** What ioredis says when it has no connection to send on, or lost it before the reply came. */
const CONNECTION_LOST = /^(Connection is closed|Stream isn't writeable|read ECONNRESET|write EPIPE|connect ECONNREFUSED|connect ETIMEDOUT)/;

/**
 * Whether trying again may help: a transient refusal, or a lost connection
 * (no reply at all: the script ran whole or not at all, and a repeated
 * finish or append is fenced by the claim's epoch). Anything else (an error
 * raised by a script, an ACL refusal, a reply fitq cannot read) would fail
 * the same way again.
 */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ReplyError') return TRANSIENT_REFUSAL.test(error.message);
  return error.name === 'MaxRetriesPerRequestError' || CONNECTION_LOST.test(error.message);
}

export interface RetryOptions {
  /** Checked before each retry: true ends the retries (the worker stopped, or its registration is gone). */
  givenUp: () => boolean;
  /** Told of each refusal that will be retried (attempt 1 = the first failure). */
  onRetry: (error: unknown, attempt: number) => void;
}

/**
 * `write()`'s result, trying again after each retryable error. Rejects with
 * the last error when it is not retryable or the caller has given up.
 */
export async function retryRefused<T>(write: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isRetryable(error) || options.givenUp()) throw error;
      options.onRetry(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
      if (options.givenUp()) throw error;
    }
  }
}
