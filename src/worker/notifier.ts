/**
 * A worker's notifications: when a run it ran has ended and its end is
 * recorded (or a run ended without its worker, left in the outbox), it POSTs the run's record (queue/notify.ts: never the run's
 * environment) to the run's --notify URL, else to the namespace's (`fitq
 * notify set`, read at start, when a `notify` event says it changed, and at
 * every poll).
 *
 * The URL is whatever someone who can write to Redis stored, so: a rejected
 * run (unsigned or altered) never notifies; a URL outside the worker's
 * targets (notify-allow.ts) or holding credentials is not sent to; redirects
 * are not followed.
 *
 * Sent in the background with Node's fetch: a slow or failing
 * receiver never holds up claims. Each try has a time limit; a failed try
 * (no answer, or a status other than 2xx or 3xx) is tried again after 1 s, then
 * twice as long each time, 5 tries in all, then given up; each failure is
 * logged, with the URL's origin only (a webhook's path or query often holds
 * its secret). A stopping worker waits a short while for notifications on
 * their way, then gives them up, saying how many.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import { NOTIFY_SETTING, notifyPayload } from '../queue/notify.js';
import { execPipeline } from '../queue/pipeline.js';
import { parseRunFields, runFields } from '../queue/run-record.js';
import { notifyRefusal, SIGNED_ONLY, type NotifyTargets } from './notify-allow.js';

/** Tries per notification, and the wait after the first failed one (doubling). */
export const NOTIFY_TRIES = 5;
const FIRST_RETRY_MS = 1000;
/** Time limit of one try. */
const TRY_TIMEOUT_MS = 10_000;
/** How long a stopping worker waits for notifications still on their way. */
export const NOTIFY_SHUTDOWN_MS = 3000;

export interface NotifierParts {
  redis: Redis;
  keys: NamespaceKeys;
  /** The namespace's name, in the payload. */
  queue: string;
  logger: Logger;
  targets: NotifyTargets;
}

/** Notifications taken from the outbox per read. */
const OUTBOX_BATCH = 100;

/** A run's own --notify URL, from its job data. */
function ownUrl(data: unknown): string | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const notify = (JSON.parse(data) as { notify?: unknown }).notify;
    return typeof notify === 'string' ? notify : undefined;
  } catch {
    return undefined;
  }
}

/** The URL as logs show it: its origin only (never credentials, path or query). */
function shown(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? '(a URL that is not http(s))' : origin;
  } catch {
    return '(invalid URL)';
  }
}

export class Notifier {
  private defaultUrl: string | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private draining = false;
  private signedOnlySaid = false;

  constructor(private readonly parts: NotifierParts) {}

  /** Reads the namespace's URL again; keeps the last one known if Redis does not answer. */
  async refreshDefault(): Promise<void> {
    const { redis, keys } = this.parts;
    try {
      this.defaultUrl = (await redis.hget(keys.settings, NOTIFY_SETTING)) || undefined;
    } catch {
      // Read again at the next poll.
    }
  }

  /** A run ended with `status`: notifies its URL, or the namespace's, if any (in the background). */
  runEnded(runId: string, status: string, ownUrl: string | undefined): void {
    // Its worker refused it as unsigned or altered: what it holds is nobody's word.
    if (status === 'rejected') return;
    const url = ownUrl || this.defaultUrl;
    if (url === undefined || this.stopping.signal.aborted) return;
    const refusal = notifyRefusal(this.parts.targets, url);
    if (refusal !== undefined) {
      this.refuse(runId, url, refusal);
      return;
    }
    const sending: Promise<void> = this.send(runId, url).finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /**
   * Sends the notifications of runs that ended without their worker (the
   * outbox, see notifyOutbox.lua): each taken by one live worker. A worker
   * that dies sending one loses it (at most once, as for its own runs).
   */
  async drainOutbox(): Promise<void> {
    const { redis, keys, logger } = this.parts;
    if (this.draining || this.stopping.signal.aborted) return;
    this.draining = true;
    try {
      for (;;) {
        const ids = await redis.lpop(keys.notifyOutbox, OUTBOX_BATCH);
        if (!ids || ids.length === 0) return;
        const runs = await execPipeline(ids.reduce((pipeline, id) => pipeline.hmget(keys.run(id), 'data', 'status'), redis.pipeline()), { wrongTypeAsNull: true });
        ids.forEach((id, i) => {
          const [data, status] = (runs[i] as (string | null)[] | null) ?? [];
          this.runEnded(id, status ?? '', ownUrl(data));
        });
      }
    } catch (error) {
      logger.warn({ err: error }, `Could not read the notifications waiting to be sent: ${(error as Error).message}`);
    } finally {
      this.draining = false;
    }
  }

  /** Waits up to `boundMs` for notifications on their way, then gives up the rest. */
  async close(boundMs = NOTIFY_SHUTDOWN_MS): Promise<void> {
    if (this.pending.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.pending]), new Promise((resolve) => (timer = setTimeout(resolve, boundMs)))]);
      clearTimeout(timer);
    }
    const left = this.pending.size;
    this.stopping.abort();
    if (left > 0) this.parts.logger.warn(`Gave up ${left} notification(s) still on their way: the worker is stopping`);
    await Promise.allSettled([...this.pending]);
  }

  private refuse(runId: string, url: string, why: string): void {
    if (why === SIGNED_ONLY) {
      // Every run would say so on such a worker: once is enough.
      if (this.signedOnlySaid) return;
      this.signedOnlySaid = true;
      this.parts.logger.warn(`Not notifying ${shown(url)} of run ${runId}: ${why} (said once)`);
      return;
    }
    this.parts.logger.warn({ runId }, `Not notifying ${shown(url)} of run ${runId}: ${why}`);
  }

  private async send(runId: string, url: string): Promise<void> {
    const { redis, keys, queue, logger } = this.parts;
    let body: string;
    try {
      const hash = await redis.hgetall(keys.run(runId));
      if (!hash.status) return; // removed meanwhile
      body = JSON.stringify(notifyPayload(queue, parseRunFields(runFields(runId, hash))));
    } catch (error) {
      logger.warn({ runId, err: error }, `Could not notify ${shown(url)} of run ${runId}: reading it failed: ${(error as Error).message}`);
      return;
    }
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'fitq' },
          body,
          // A redirect would take the run's record (and the worker's network position) wherever the receiver says.
          redirect: 'manual',
          signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(TRY_TIMEOUT_MS)]),
        });
        await response.body?.cancel().catch(() => {});
        if (response.ok) {
          logger.debug({ runId, tries: attempt }, `Notified ${shown(url)} of run ${runId}`);
          return;
        }
        if (response.status >= 300 && response.status < 400) {
          logger.warn({ runId, tries: attempt }, `Could not notify ${shown(url)} of run ${runId} (HTTP ${response.status}: redirects are not followed); not tried again`);
          return;
        }
        failure = `HTTP ${response.status}`;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        const cause = (error as Error & { cause?: Error }).cause;
        failure = (error as Error).name === 'TimeoutError' ? `no answer within ${TRY_TIMEOUT_MS / 1000} s` : (cause?.message ?? (error as Error).message);
        failure = failure.replaceAll(url, shown(url));
      }
      if (attempt >= NOTIFY_TRIES) {
        logger.warn({ runId, tries: attempt }, `Could not notify ${shown(url)} of run ${runId} (${failure}); gave up after ${attempt} tries`);
        return;
      }
      const delayMs = FIRST_RETRY_MS * 2 ** (attempt - 1);
      logger.warn({ runId, try: attempt }, `Could not notify ${shown(url)} of run ${runId} (${failure}); trying again in ${delayMs / 1000} s`);
      const waited = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), delayMs);
        this.stopping.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(false);
        }, { once: true });
      });
      if (!waited) return;
    }
  }
}
