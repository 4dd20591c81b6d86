/**
 * How many streams the dashboard keeps open at once: event streams
 * (`/events`) and run output (`/runs/NS/ID/log`) alike. Each holds a
 * socket and a little memory for as long as a page is open, so one client
 * (an address) may hold MAX_STREAMS_PER_CLIENT, and all of them together
 * MAX_STREAMS; the next is refused in plain words (429 for the client,
 * 503 for everyone) until one closes. A browser holds at most six
 * connections to one dashboard, so a person never meets the first limit.
 */
import type { Context } from 'hono';

export const MAX_STREAMS = 256;
export const MAX_STREAMS_PER_CLIENT = 32;

/** Asked again after this many seconds (Retry-After). */
const RETRY_AFTER_S = 5;

export interface StreamSlot {
  release(): void;
}

export class StreamSlots {
  private total = 0;
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly max = MAX_STREAMS,
    private readonly perClient = MAX_STREAMS_PER_CLIENT,
  ) {}

  /** A place for one more stream of `client`, or why there is none (with its status). */
  take(client: string): StreamSlot | { status: 429 | 503; message: string } {
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.perClient) {
      return { status: 429, message: `too many streams from ${client}: at most ${this.perClient} at once per client (event streams and run output; close a page)` };
    }
    if (this.total >= this.max) {
      return { status: 503, message: `the dashboard has ${this.total} streams open, as many as it serves at once (event streams and run output): try again later` };
    }
    this.total++;
    this.byClient.set(client, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.byClient.get(client) ?? 1) - 1;
        if (left === 0) this.byClient.delete(client);
        else this.byClient.set(client, left);
      },
    };
  }
}

/** The address a request came from (its socket's peer); `local` for a request made in process. */
function clientOf(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress?.replace(/^::ffff:/, '') ?? 'local';
}

/**
 * Opens a stream (`open`, given the slot to release when it ends) if the
 * request's client and the dashboard have room for one; else the refusal.
 */
export async function withStreamSlot(c: Context, slots: StreamSlots, open: (slot: StreamSlot) => Response | Promise<Response>): Promise<Response> {
  const slot = slots.take(clientOf(c));
  if ('status' in slot) {
    c.header('Retry-After', String(RETRY_AFTER_S));
    c.header('Cache-Control', 'no-store');
    return c.text(`${slot.message}\n`, slot.status);
  }
  try {
    return await open(slot);
  } catch (error) {
    slot.release();
    throw error;
  }
}
