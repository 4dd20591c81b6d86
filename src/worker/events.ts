/**
 * The namespace's events, as one worker hears them on its own connection:
 * wake-ups when a run may fit now, and cancel and stop requests addressed to
 * it. Events are hints: anyone who can publish can send one, so a worker
 * acts on a request only as Redis records it (see requests.ts); one that
 * missed some (disconnected) looks again once the connection is ready, and
 * its poll and heartbeat catch the rest.
 */
import type { RedisConnection } from '../redis/connection.js';
import { subscribe, type Subscription } from '../redis/subscription.js';

export interface EventHandlers {
  /** A run may fit now: staged, capacity added or freed, the queue resumed. */
  wake(): void;
  /** A run with many dependents ended: reconciling judges the rest of them (see settleDependents.lua). */
  dependents(): void;
  /** Holds moved to another worker. */
  holdsMoved(): void;
  /** A run of this worker may have been canceled: check its job. */
  cancel(runId: string): void;
  /** This worker may have been asked to stop: check its record. */
  stop(): void;
  /** The namespace's notification URL changed (fitq notify): read it again. */
  notify?(): void;
  /** A run ended without its worker: its notification waits in the outbox. */
  outbox?(): void;
}

/** Subscribes to `channel` on a connection of its own (closed on stop). */
export async function subscribeEvents(redis: RedisConnection, channel: string, worker: string, handlers: EventHandlers): Promise<Subscription> {
  return subscribe(redis, channel, {
    message: (message) => onEvent(message, worker, handlers),
    // After a reconnect, messages may have been missed: look again.
    ready: () => handlers.wake(),
  });
}

function onEvent(message: string, worker: string, handlers: EventHandlers): void {
  let event: { type?: string; runId?: string; worker?: string };
  try {
    event = JSON.parse(message) as typeof event;
  } catch {
    return;
  }
  if (event.type === 'staged' || event.type === 'pool' || event.type === 'poolReleased' || event.type === 'resumed') handlers.wake();
  else if (event.type === 'dependents') handlers.dependents();
  else if (event.type === 'holds' && event.worker !== worker) handlers.holdsMoved();
  // Drained or undrained (fitq drain, undrain): its next claim says which.
  else if (event.type === 'drain' && event.worker === worker) handlers.wake();
  else if (event.type === 'cancel' && event.worker === worker && event.runId) handlers.cancel(event.runId);
  else if (event.type === 'stop' && event.worker === worker) handlers.stop();
  else if (event.type === 'notify') handlers.notify?.();
  else if (event.type === 'outbox') handlers.outbox?.();
}
