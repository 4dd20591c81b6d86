/**
 * The dashboard outlives Redis going away: while it is down a page says
 * what failed (500, one line on the dashboard's stderr), and once it is
 * back pages and the event stream work again without restarting the
 * dashboard.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { startDashboard } from '../support/browser.js';
import { openEventStream } from '../support/sse.js';
import { newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: RedisServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

describe('dashboard across a Redis restart', () => {
  it('fails pages while Redis is down and serves them, live, once it is back', async () => {
    server = await startRedisServer();
    const queue = newQueue();
    const dashboard = await startDashboard(queue, [], { FITQ_REDIS_URL: server.url });
    expect((await fetch(`${dashboard.origin}/fragments/overview`)).status).toBe(200);

    await server.stop();
    // As soon as the dashboard notices (what it showed last may be kept a moment before).
    const down = await waitFor('a failed overview', async () => {
      const response = await fetch(`${dashboard.origin}/fragments/overview`);
      return response.status === 500 && response.text();
    });
    expect(down).toContain('Something failed');
    await waitFor('the failure on stderr', () => /^Error: GET \/fragments\/overview: .+$/m.test(dashboard.stderr()));

    await server.start();
    await waitFor('the overview again', async () => (await fetch(`${dashboard.origin}/fragments/overview`)).status === 200, 30_000, 200);
    // Live again: a run staged now is announced on the stream.
    const client = await FitqClient.connect({ redisUrl: server.url, queue });
    try {
      const events = await openEventStream(`${dashboard.origin}/events`);
      await events.until(/event: hello\n/);
      await client.stage({ command: ['true'], resources: 'x=1' });
      const heard = await events.until(/event: change\ndata: \{"queue":"[^"]+","topics":\[[^\]]*"runs"/);
      await events.close();
      expect(heard).toContain(`"queue":"${queue}"`);
      const body = await (await fetch(`${dashboard.origin}/fragments/overview`)).text();
      expect(body).toMatch(/data-testid="count-staged">1</);
    } finally {
      await client.close();
    }
  });
});
