/**
 * Bull Board (`/bull`) and Prometheus metrics (`/metrics`) as the real
 * `fitq dashboard --token` process serves them (test/support/browser.ts),
 * the board opened in real headless Chromium: both are behind the token
 * like every page; the token given once as `?token=` becomes the cookie the
 * board's own API calls carry; the board stays on the dashboard's origin,
 * links back to the dashboard and is linked from it, and is read-only
 * without --allow-actions.
 */
import type { Response as PageResponse } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sessionCookieName } from '../../src/dashboard/auth.js';
import { boardQueueName } from '../../src/dashboard/bull-board.js';
import { chromiumExecutable, openBrowserPage, saveScreenshots, startDashboard } from '../support/browser.js';
import { stage } from '../support/bullmq.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { parseExposition, typesOf, valueOf } from '../support/prometheus.js';

const TOKEN = 'bull-7f3e token&=';

interface ApiCall {
  path: string;
  status: number;
  cookie: string | undefined;
}

describe('Bull Board and /metrics in the real fitq dashboard', () => {
  it('/bull: refused without the token; with ?token= once the board runs on the cookie, on the dashboard origin only, linked both ways, read-only', async () => {
    chromiumExecutable(); // fails at once, before any setup, when chromium is missing
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids = await stage(queue, ['--repeat', '2', '-r', 'huge=1', '--', 'true']);
    const dashboard = await startDashboard(queue, ['--token', TOKEN]);
    const { origin } = dashboard;
    const name = encodeURIComponent(boardQueueName(queue, client.keys.queue.name));

    // Without the token (or with another): the board's page and its API are refused.
    for (const path of ['/bull', '/bull/', `/bull/queue/${name}`, '/bull/api/queues', `/bull/api/queues/${name}/pause`]) {
      const missing = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect(missing.status, `${path} without the token`).toBe(401);
      const wrong = await fetch(`${origin}${path}`, { headers: { Authorization: 'Bearer bull-7f3e' }, redirect: 'manual' });
      expect(wrong.status, `${path} with a wrong token`).toBe(401);
    }
    const stranger = await openBrowserPage(origin);
    expect((await stranger.page.goto(`${origin}/bull`))?.status()).toBe(401);
    await stranger.page.getByTestId('unauthorized').waitFor();
    expect((await stranger.page.goto(`${origin}/bull?token=bull-7f3e`))?.status()).toBe(401);
    expect(await stranger.page.context().cookies()).toEqual([]);
    expect(stranger.blocked).toEqual([]);

    // The token once in the address: it moves into the cookie and out of the address bar.
    const opened = await openBrowserPage(origin);
    const { page } = opened;
    const apiCalls: Promise<ApiCall>[] = [];
    page.on('response', (response: PageResponse) => {
      const path = new URL(response.url()).pathname;
      if (!path.startsWith('/bull/api/')) return;
      apiCalls.push(response.request().allHeaders().then((headers) => ({ path, status: response.status(), cookie: headers.cookie })));
    });
    await page.goto(`${origin}/bull?token=${encodeURIComponent(TOKEN)}`);
    expect(page.url()).toBe(`${origin}/bull`);
    await page.getByText(`${ids.length} Jobs`, { exact: true }).waitFor();
    await page.getByText(queue, { exact: true }).first().waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.map(({ name: cookie, httpOnly, sameSite }) => ({ cookie, httpOnly, sameSite }))).toEqual([{ cookie: sessionCookieName(Number(new URL(origin).port)), httpOnly: true, sameSite: 'Strict' }]);

    // Its API calls carry the cookie and succeed.
    const calls = await Promise.all(apiCalls);
    expect(calls.map((call) => call.path)).toContain('/bull/api/queues');
    for (const call of calls) {
      expect(call.status, call.path).toBe(200);
      expect(call.cookie, call.path).toContain(`${sessionCookieName(Number(new URL(origin).port))}=`);
    }
    await saveScreenshots(page, 'bull-board-served');

    // Bull Board's link back to the dashboard, and the dashboard's nav link to the board.
    // (The board's links are in the menu behind its header's last button.)
    await page.locator('header ul button[aria-haspopup="menu"]').click();
    const back = page.getByRole('menuitem', { name: 'fitq dashboard', exact: true });
    expect(await back.getAttribute('href')).toBe('/');
    await back.click();
    await page.waitForURL(`${origin}/`);
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    expect(await page.locator(`[data-testid="ns-${queue}"] [data-testid="count-staged"]`).innerText()).toContain(String(ids.length));
    await page.locator('[data-testid="nav-bull"]').click();
    await page.waitForURL(`${origin}/bull`);
    await page.getByText(`${ids.length} Jobs`, { exact: true }).waitFor();

    // Read-only: a change asked from the board's own page (same origin, with the cookie) is refused.
    const answer = (await page.evaluate(`fetch('/bull/api/queues/${name}/pause', { method: 'PUT' }).then(async (r) => [r.status, await r.text()])`)) as [number, string];
    expect(answer[0], answer[1]).toBe(403);
    expect(answer[1]).toContain('the dashboard is read-only');
    // (The browser logs the refusal.)
    expect(opened.consoleErrors.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 403 (Forbidden)']);
    expect(await client.isPaused()).toBe(false);

    // Everything came from the dashboard; no console error.
    expect(opened.requests.filter((url) => url.startsWith(`${origin}/bull/api/`)).length).toBeGreaterThan(0);
    expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    expect(opened.blocked).toEqual([]);
    expect(opened.consoleErrors).toEqual([]);
  }, 120_000);

  it('/metrics: refused without the token; with Authorization: Bearer, the Prometheus text of the namespace', async () => {
    const queue = newQueue();
    const ids = await stage(queue, ['--repeat', '3', '-r', 'huge=1', '--', 'true']);
    const dashboard = await startDashboard(queue, ['--token', TOKEN]);

    for (const headers of [{}, { Authorization: 'Bearer bull-7f3e' }] as Record<string, string>[]) {
      const refused = await fetch(`${dashboard.origin}/metrics`, { headers });
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(await refused.text()).not.toContain('fitq_runs');
    }

    const scraped = await fetch(`${dashboard.origin}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4\b/);
    const text = await scraped.text();
    expect(typesOf(text).get('fitq_runs')).toBe('gauge');
    const samples = parseExposition(text);
    expect(valueOf(samples, 'fitq_up', { queue })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(ids.length);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'running' })).toBe(0);
  });
});
