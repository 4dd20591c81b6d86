/**
 * A worker's notifications: when a run it ran has ended and its end is
 * recorded (or a run ended without its worker, left in the outbox), it POSTs the run's record (queue/notify.ts: never the run's
 * environment) to the run's --notify URL, else to the namespace's (`fitq
 * notify set`, read at start, when a `notify` event says it changed, and at
 * every poll). Sent in the background with Node's fetch: a slow or failing
 * receiver never holds up claims. Each try has a time limit; a failed try
 * (no answer, or a status other than 2xx) is tried again after 1 s, then
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
import { fitqRunData, parseRunFields, runFields } from '../queue/run-record.js';

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

/** The URL as logs show it: its origin only. */
function shown(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

export class Notifier {
  private defaultUrl: string | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private draining = false;

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

  /** A run's end was recorded: notifies its URL, or the namespace's, if any (in the background). */
  runEnded(runId: string, ownUrl: string | undefined): void {
    const url = ownUrl || this.defaultUrl;
    if (url === undefined || this.stopping.signal.aborted) return;
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
        // As fitq wrote it (runData), not as BullMQ's updateData may have left `data`.
        const data = await execPipeline(ids.reduce((pipeline, id) => pipeline.hmget(keys.run(id), 'runData', 'data'), redis.pipeline()), { wrongTypeAsNull: true });
        ids.forEach((id, i) => {
          const [runData, bullData] = (data[i] ?? []) as (string | null)[];
          this.runEnded(id, ownUrl(fitqRunData({ runData, data: bullData })));
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
          signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(TRY_TIMEOUT_MS)]),
        });
        await response.body?.cancel().catch(() => {});
        if (response.ok) {
          logger.debug({ runId, tries: attempt }, `Notified ${shown(url)} of run ${runId}`);
          return;
        }
        failure = `HTTP ${response.status}`;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        const cause = (error as Error & { cause?: Error }).cause;
        failure = (error as Error).name === 'TimeoutError' ? `no answer within ${TRY_TIMEOUT_MS / 1000} s` : (cause?.message ?? (error as Error).message);
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
