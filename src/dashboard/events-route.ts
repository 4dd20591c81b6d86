/**
 * GET /events: the live feed's changes (live.ts) as server-sent events, on
 * one stream per open page, within the limits on open streams.
 */
import type { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { DashboardContext } from './context.js';
import type { DashboardEnv } from './env.js';
import type { LiveChange } from '../live/feed.js';
import { withStreamSlot } from './stream-slots.js';

/** A comment on every open stream this often, so proxies keep it open. */
const KEEPALIVE_MS = 15_000;

/** GET /events: the feed's changes as server-sent events (`change`, data `{"queue","topics"}`). */
export function registerLive(app: Hono<DashboardEnv>, context: DashboardContext): void {
  app.get('/events', (c) =>
    withStreamSlot(c, context.streams, (slot) => {
      c.header('Cache-Control', 'no-store');
      return streamSSE(c, async (stream) => {
        try {
          await sendChanges(stream, context);
        } finally {
          slot.release();
        }
      });
    }),
  );
}

/** The feed's changes on one open stream, until it closes. */
async function sendChanges(stream: SSEStreamingApi, context: DashboardContext): Promise<void> {
  const queue: LiveChange[] = [];
  let wake: (() => void) | undefined;
  const stop = context.live?.listen((change) => {
    queue.push(change);
    wake?.();
  });
  stream.onAbort(() => {
    stop?.();
    wake?.();
  });
  await stream.writeSSE({ event: 'hello', data: JSON.stringify({ queues: [...context.clients.keys()] }), retry: 2000 });
  while (!stream.aborted && !stream.closed) {
    for (const change of queue.splice(0)) await stream.writeSSE({ event: 'change', data: JSON.stringify(change) });
    if (queue.length > 0) continue;
    const keepalive = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), KEEPALIVE_MS);
      wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
    });
    wake = undefined;
    if (keepalive && !stream.aborted) await stream.write(': keepalive\n\n');
  }
  stop?.();
}
