/**
 * `fitq top` running: reads a snapshot, draws it, and reads again on each
 * change fitq's events announce (live/feed.ts: runs staged, started and
 * ended, workers joining and leaving, the pool), at most one read at a
 * time; the clock and run durations tick once a second from what was
 * read. Redis away is said above the last frame, which stays, and the view
 * carries on once Redis is back. q or Ctrl-C quits, as a hang-up or
 * SIGTERM does, and gives the terminal back as it was.
 */
import type { FitqClient } from '../client.js';
import { LiveFeed } from '../live/feed.js';
import type { ConnectionOptions } from '../redis/connection.js';
import { oneLine } from '../text/quote.js';
import { renderTop, type TopFrame } from './render.js';
import { quits, TerminalScreen } from './screen.js';
import { readTopSnapshot } from './snapshot.js';

const TICK_MS = 1000;
const QUIT_SIGNALS = ['SIGTERM', 'SIGHUP'] as const;

export interface TopTerminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

export async function runTop(client: FitqClient, connection: ConnectionOptions, queue: string, terminal: TopTerminal): Promise<void> {
  const screen = new TerminalScreen(terminal.input, terminal.output);
  const frame: TopFrame = { queue, now: Date.now() };
  const draw = () => screen.draw(renderTop({ ...frame, now: Date.now() }, screen.size()));
  const refresh = latestOnly(async () => {
    try {
      frame.snapshot = await readTopSnapshot(client);
      delete frame.problem;
    } catch (error) {
      // Redis away fails each command its own way (retries given up, connection closed): said once, plainly.
      frame.problem = client.redis.status === 'ready' ? oneLine(error instanceof Error ? error.message : String(error)) : 'cannot reach Redis (trying again)';
    }
    draw();
  });

  const feed = await LiveFeed.start(connection, [client.keys]);
  let quit: () => void = () => {};
  const quitting = new Promise<void>((resolve) => (quit = resolve));
  const onSignal = () => quit();
  QUIT_SIGNALS.forEach((signal) => process.on(signal, onSignal));
  screen.open((text, key) => (quits(text, key) ? quit() : undefined), draw);
  const tick = setInterval(draw, TICK_MS);
  try {
    feed.listen(() => void refresh());
    draw();
    await refresh();
    await quitting;
  } finally {
    clearInterval(tick);
    QUIT_SIGNALS.forEach((signal) => process.off(signal, onSignal));
    screen.close();
    await feed.close();
  }
}

/**
 * A task run one at a time: asked again while it runs, it runs once more
 * after, however many times it was asked (what it reads then is newest).
 */
function latestOnly(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await task();
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
  };
  return run;
}
