/**
 * A worker's notifications: when a run it ran has ended and its end is
 * recorded (or a run ended without its worker, left in the outbox), it
 * POSTs the run's record (model/notify.ts: never the run's environment) to
 * the run's --notify URL, else to the namespace's (`fitq
 * notify set`, read at start, when a `notify` event says it changed, and at
 * every poll).
 *
 * The URL is whatever someone who can write to Redis stored, so: a rejected
 * run (unsigned or altered) never notifies; a URL outside the worker's
 * targets (notify-allow.ts) or holding credentials is not sent to; redirects
 * are not followed.
 *
 * Sent in the background with Node's fetch, bounded: at most `concurrent`
 * POSTs at once, at most `backlog` notifications held (sending, waiting for
 * their turn or to be tried again); one beyond that is dropped, the first
 * of a spell logged and the rest counted. So a slow or failing receiver
 * never holds up claims or run ends, nor fills the worker's memory or
 * sockets. The outbox is taken only as far as there is room: the rest waits
 * in Redis. Each try has a time limit; a failed try (no answer, or a status
 * other than 2xx or 3xx) is tried again after 1 s, then twice as long each
 * time, 5 tries in all, then given up; each failure is logged, with the
 * URL's origin only (a webhook's path or query often holds its secret). A
 * stopping worker waits a short while for notifications on their way, then
 * gives them up, saying how many.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import { NOTIFY_SETTING, notifyPayload } from '../model/notify.js';
import { execPipeline } from '../redis/pipeline.js';
import { fitqRunData, parseRunFields, runFields } from '../model/run-data.js';
import { notifyRefusal, SIGNED_ONLY, type NotifyTargets } from './notify-allow.js';
import type { NotifyBounds } from './notify-bounds.js';
import { ownUrl, shown } from './notify-url.js';

/** Tries per notification, and the wait after the first failed one (doubling). */
export const NOTIFY_TRIES = 5;
const FIRST_RETRY_MS = 1000;
/** The wait after `tries` failed tries. */
const retryDelayMs = (tries: number) => FIRST_RETRY_MS * 2 ** (tries - 1);
/** How long a stopping worker waits for notifications still on their way. */
export const NOTIFY_SHUTDOWN_MS = 3000;

export interface NotifierParts {
  redis: RedisConnection;
  keys: NamespaceKeys;
  /** The namespace's name, in the payload. */
  queue: string;
  logger: Logger;
  targets: NotifyTargets;
  bounds: NotifyBounds;
}

/** Notifications taken from the outbox per read, at most. */
const OUTBOX_BATCH = 100;

/** A notification held: its run, where it goes, and the tries made. */
interface Delivery {
  runId: string;
  url: string;
  tries: number;
}

export class Notifier {
  private defaultUrl: string | undefined;
  /** Held: every delivery accepted and not done yet. */
  private held = 0;
  /** Dropped since the backlog was last empty. */
  private dropped = 0;
  private readonly waiting: Delivery[] = [];
  private readonly sending = new Set<Promise<void>>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private idleWaiters: (() => void)[] = [];
  private readonly stopping = new AbortController();
  private draining = false;
  /** The outbox was left with entries for lack of room: read it again when there is some. */
  private outboxBehind = false;
  private signedOnlySaid = false;

  constructor(private readonly parts: NotifierParts) {}

  /** Reads the namespace's URL again; keeps the last one known if RedisConnection does not answer. */
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
    if (!this.accept(runId, status, ownUrl)) this.drop(runId);
  }

  /** Holds the notification of a run that ended, if it has one to send; false when the backlog is full. */
  private accept(runId: string, status: string, ownUrl: string | undefined): boolean {
    // Its worker refused it as unsigned or altered: what it holds is nobody's word.
    if (status === 'rejected') return true;
    const url = ownUrl || this.defaultUrl;
    if (url === undefined || this.stopping.signal.aborted) return true;
    const refusal = notifyRefusal(this.parts.targets, url);
    if (refusal !== undefined) {
      this.refuse(runId, url, refusal);
      return true;
    }
    if (this.held >= this.parts.bounds.backlog) return false;
    this.held += 1;
    this.waiting.push({ runId, url, tries: 0 });
    this.pump();
    return true;
  }

  /**
   * Sends the notifications of runs that ended without their worker (the
   * outbox, see notifyOutbox.lua): each taken by one live worker, only as
   * many as it has room for. A worker that dies sending one loses it (at
   * most once, as for its own runs).
   */
  async drainOutbox(): Promise<void> {
    const { redis, keys, logger, bounds } = this.parts;
    if (this.draining || this.stopping.signal.aborted) return;
    this.draining = true;
    this.outboxBehind = false;
    try {
      for (;;) {
        const room = Math.min(OUTBOX_BATCH, bounds.backlog - this.held);
        if (room <= 0) {
          this.outboxBehind = true;
          return;
        }
        const ids = await redis.lpop(keys.notifyOutbox, room);
        if (!ids || ids.length === 0) return;
        const runs = await execPipeline(ids.reduce((pipeline, id) => pipeline.hmget(keys.run(id), 'runData', 'data', 'status'), redis.pipeline()), { wrongTypeAsNull: true });
        // Runs of this worker that ended meanwhile took room first: what finds none goes back, in its order, for later.
        const back = ids.filter((id, i) => {
          // As fitq wrote it (runData), not as BullMQ's updateData may have left `data`.
          const [runData, bullData, status] = (runs[i] as (string | null)[] | null) ?? [];
          return !this.accept(id, status ?? '', ownUrl(fitqRunData({ runData: runData ?? null, data: bullData ?? null })));
        });
        if (back.length > 0) {
          await redis.lpush(keys.notifyOutbox, ...back.reverse());
          this.outboxBehind = true;
          return;
        }
      }
    } catch (error) {
      logger.warn({ err: error }, `Could not read the notifications waiting to be sent: ${(error as Error).message}`);
    } finally {
      this.draining = false;
    }
  }

  /** Waits up to `boundMs` for notifications on their way, then gives up the rest. */
  async close(boundMs = NOTIFY_SHUTDOWN_MS): Promise<void> {
    if (this.held > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => this.idleWaiters.push(resolve)), new Promise((resolve) => (timer = setTimeout(resolve, boundMs)))]);
      clearTimeout(timer);
    }
    const left = this.held;
    this.stopping.abort();
    this.retryTimers.forEach((timer) => clearTimeout(timer));
    this.waiting.length = 0;
    if (left > 0) this.parts.logger.warn(`Gave up ${left} notification(s) still on their way: the worker is stopping`);
    await Promise.allSettled([...this.sending]);
    this.sayDropped();
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

  private drop(runId: string): void {
    this.dropped += 1;
    if (this.dropped > 1) return;
    this.parts.logger.warn(
      { runId },
      `Dropped the notification of run ${runId}: ${this.parts.bounds.backlog} notifications are already waiting to be sent (is the receiver slow or down?); further ones are dropped and counted, not logged`,
    );
  }

  /** Says how many were dropped since the backlog was last empty, if any. */
  private sayDropped(): void {
    if (this.dropped === 0) return;
    this.parts.logger.warn(`Dropped ${this.dropped} notification(s) in all: ${this.parts.bounds.backlog} were already waiting to be sent`);
    this.dropped = 0;
  }

  /** Starts the next deliveries while there is a free slot. */
  private pump(): void {
    while (this.sending.size < this.parts.bounds.concurrent && this.waiting.length > 0 && !this.stopping.signal.aborted) {
      const delivery = this.waiting.shift()!;
      const sending: Promise<void> = this.tryOnce(delivery).catch(() => false).then((again) => {
        this.sending.delete(sending);
        if (again) this.retryLater(delivery);
        else this.done();
        this.pump();
      });
      this.sending.add(sending);
    }
  }

  private retryLater(delivery: Delivery): void {
    if (this.stopping.signal.aborted) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.waiting.push(delivery);
      this.pump();
    }, retryDelayMs(delivery.tries));
    this.retryTimers.add(timer);
  }

  /** A delivery is done with (sent, given up or refused on the way). */
  private done(): void {
    this.held -= 1;
    if (this.held === 0) {
      this.sayDropped();
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((resolve) => resolve());
    }
    if (this.outboxBehind && !this.stopping.signal.aborted) void this.drainOutbox();
  }

  /** One try; whether to try again later. */
  private async tryOnce(delivery: Delivery): Promise<boolean> {
    const { redis, keys, queue, logger, bounds } = this.parts;
    const { runId, url } = delivery;
    delivery.tries += 1;
    const attempt = delivery.tries;
    let body: string;
    try {
      const hash = await redis.hgetall(keys.run(runId));
      if (!hash.status) return false; // removed meanwhile
      body = JSON.stringify(notifyPayload(queue, parseRunFields(runFields(runId, hash))));
    } catch (error) {
      logger.warn({ runId, err: error }, `Could not notify ${shown(url)} of run ${runId}: reading it failed: ${(error as Error).message}`);
      return false;
    }
    let failure: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'fitq' },
        body,
        // A redirect would take the run's record (and the worker's network position) wherever the receiver says.
        redirect: 'manual',
        signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(bounds.tryTimeoutMs)]),
      });
      await response.body?.cancel().catch(() => {});
      if (response.ok) {
        logger.debug({ runId, tries: attempt }, `Notified ${shown(url)} of run ${runId}`);
        return false;
      }
      if (response.status >= 300 && response.status < 400) {
        logger.warn({ runId, tries: attempt }, `Could not notify ${shown(url)} of run ${runId} (HTTP ${response.status}: redirects are not followed); not tried again`);
        return false;
      }
      failure = `HTTP ${response.status}`;
    } catch (error) {
      if (this.stopping.signal.aborted) return false;
      const cause = (error as Error & { cause?: Error }).cause;
      failure = (error as Error).name === 'TimeoutError' ? `no answer within ${bounds.tryTimeoutMs / 1000} s` : (cause?.message ?? (error as Error).message);
      failure = failure.replaceAll(url, shown(url));
    }
    if (attempt >= NOTIFY_TRIES) {
      logger.warn({ runId, tries: attempt }, `Could not notify ${shown(url)} of run ${runId} (${failure}); gave up after ${attempt} tries`);
      return false;
    }
    logger.warn({ runId, try: attempt }, `Could not notify ${shown(url)} of run ${runId} (${failure}); trying again in ${retryDelayMs(attempt) / 1000} s`);
    return true;
  }
}
