/**
 * The dashboard's actions, on the real `fitq dashboard` in real headless
 * Chromium: without --allow-actions there is no action in any page and no
 * action route (404); with it, each action is a confirm step in the page,
 * its result is shown, and its effect is what FitqClient and `fitq runs` /
 * `fitq workers` then read: cancel a staged run, hold and release one,
 * restart a failed run, change a priority, drain and undrain a worker
 * (from the runs page filtered on it, and from the workers page, where the
 * step stays open through live refreshes). A
 * POST without the page's token, or from another site, is refused and does
 * nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { FitqClient } from '../../src/client.js';
import { openBrowserPage, saveScreenshots, startDashboard } from '../support/browser.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';

const ACTION_PATHS = ['runs/Q/ID/cancel', 'runs/Q/ID/hold', 'runs/Q/ID/release', 'runs/Q/ID/restart', 'runs/Q/ID/priority', 'workers/Q/W/drain', 'workers/Q/W/undrain'];

/** A run's status as `fitq runs --json` gives it. */
async function cliStatus(queue: string, id: string): Promise<{ status: string; priority: number }> {
  const result = await fitq(['runs', '--json'], { queue });
  const run = (JSON.parse(result.stdout) as { runs: { id: string; status: string; priority: number }[] }).runs.find((candidate) => candidate.id === id);
  if (!run) throw new Error(`fitq runs lists no run ${id}: ${result.stdout}`);
  return { status: run.status, priority: run.priority };
}

/** Opens an action's confirm step on the page (unless open), confirms it, and returns the result lines shown. */
async function act(page: Page, testid: string, fill?: string): Promise<{ ok: string | null; lines: string[]; status: number | undefined }> {
  const step = page.getByTestId(`action-${testid}`);
  if ((await step.getAttribute('open')) === null) await step.locator('summary').click();
  if (fill !== undefined) await page.getByTestId('priority-input').fill(fill);
  const [response] = await Promise.all([page.waitForEvent('response', (r) => r.request().method() === 'POST'), page.getByTestId(`confirm-${testid}`).click()]);
  await page.getByTestId('action-result').waitFor();
  return {
    ok: await page.getByTestId('action-result').getAttribute('data-ok'),
    lines: await page.getByTestId('action-result').locator('li').allTextContents(),
    status: response.status(),
  };
}

async function runPage(page: Page, origin: string, queue: string, id: string): Promise<void> {
  await page.goto(`${origin}/runs/${queue}/${id}`);
}

describe('dashboard actions', () => {
  it('are absent without --allow-actions: no form in any page, every action route a 404', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'ro-box', resources: 'slot=1' });
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'ro-staged' });
    await client.stage({ command: ['false'], resources: 'slot=1', runId: 'ro-failed' });
    await client.waitForRuns(['ro-failed'], { timeoutMs: 20_000 }).catch(() => undefined);

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors } = await openBrowserPage(dashboard.origin);
    for (const path of [`/runs/${queue}/ro-staged`, `/runs/${queue}/ro-failed`, `/runs?worker=ro-box`, '/runs', '/workers']) {
      await page.goto(`${dashboard.origin}${path}`);
      expect(await page.locator('form[method="post"], button[data-testid^="confirm-"], [data-testid^="action-"]').count(), path).toBe(0);
      expect(await page.content(), path).not.toContain('/actions/');
    }
    for (const path of ACTION_PATHS) {
      const url = `${dashboard.origin}/actions/${path.replace('Q', queue).replace('ID', 'ro-staged').replace('W', 'ro-box')}`;
      const response = await fetch(url, { method: 'POST', body: new URLSearchParams({ priority: '5' }) });
      expect(response.status, path).toBe(404);
    }
    expect((await fetch(`${dashboard.origin}/fragments/runs/${queue}/ro-staged/actions`)).status).toBe(404);
    expect((await fetch(`${dashboard.origin}/fragments/workers/actions`)).status).toBe(404);
    expect(await cliStatus(queue, 'ro-staged')).toEqual({ status: 'staged', priority: 0 });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/ro-box\s+active/);
    expect(consoleErrors).toEqual([]);
  });

  it('with --allow-actions: cancel, hold, release, restart, priority and drain, each confirmed, their effect as fitq reads it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'act-box', resources: 'slot=1' });
    await client.stage({ command: ['false'], resources: 'slot=1', runId: 'act-failed' });
    await client.waitForRuns(['act-failed'], { timeoutMs: 20_000 }).catch(() => undefined);
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'act-staged' });
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'act-other' });

    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const { page, consoleErrors, blocked } = await openBrowserPage(dashboard.origin);

    // A staged run offers cancel, hold and priority; nothing acts before its confirm button.
    await runPage(page, dashboard.origin, queue, 'act-staged');
    expect(await page.getByTestId('run-actions').locator('details').evaluateAll((list) => list.map((item) => item.getAttribute('data-testid')))).toEqual([
      'action-cancel',
      'action-hold',
      'action-priority',
    ]);
    await page.getByTestId('action-hold').locator('summary').click();
    await page.getByTestId('confirm-hold').waitFor();
    expect(await cliStatus(queue, 'act-staged')).toEqual({ status: 'staged', priority: 0 });
    await saveScreenshots(page, 'run-actions');

    expect(await act(page, 'hold')).toEqual({ ok: 'true', status: 200, lines: ['Run act-staged held (fitq release act-staged to let it start)'] });
    expect((await cliStatus(queue, 'act-staged')).status).toBe('held');
    await page.getByTestId('action-back').click();
    expect(await act(page, 'release')).toMatchObject({ ok: 'true', lines: [expect.stringMatching(/^Run act-staged released: /)] });
    expect((await cliStatus(queue, 'act-staged')).status).toBe('staged');

    await runPage(page, dashboard.origin, queue, 'act-staged');
    expect(await act(page, 'priority', '42')).toEqual({ ok: 'true', status: 200, lines: ['Run act-staged updated: priority 0 -> 42'] });
    expect(await cliStatus(queue, 'act-staged')).toEqual({ status: 'staged', priority: 42 });
    // Out of range: the page's form will not send it; fitq refuses it when sent anyway.
    await runPage(page, dashboard.origin, queue, 'act-staged');
    await page.getByTestId('action-priority').locator('summary').click();
    await page.getByTestId('priority-input').fill('2000000');
    await page.getByTestId('confirm-priority').click();
    expect(await page.evaluate(`document.querySelector('[data-testid="priority-input"]').validity.rangeOverflow`)).toBe(true);
    const token = await page.getByTestId('action-priority').locator('input[name="action_token"]').getAttribute('value');
    const refused = await fetch(`${dashboard.origin}/actions/runs/${queue}/act-staged/priority`, {
      method: 'POST',
      body: new URLSearchParams({ action_token: token!, priority: '7.5' }),
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('expected priority to be an integer from -1000000 to 1000000, got &#39;7.5&#39;');
    expect((await cliStatus(queue, 'act-staged')).priority).toBe(42);

    await runPage(page, dashboard.origin, queue, 'act-staged');
    expect(await act(page, 'cancel')).toEqual({ ok: 'true', status: 200, lines: ['Run act-staged canceled'] });
    expect((await cliStatus(queue, 'act-staged')).status).toBe('canceled');
    expect((await cliStatus(queue, 'act-other')).status).toBe('staged');

    // A failed run offers restart: staged again, its failed attempt kept.
    await worker.stop();
    await runPage(page, dashboard.origin, queue, 'act-failed');
    expect(await act(page, 'restart')).toEqual({ ok: 'true', status: 200, lines: ['Run act-failed restarted: staged'] });
    expect((await cliStatus(queue, 'act-failed')).status).toBe('staged');
    expect((await client.getRun('act-failed')).attempts?.map((attempt) => attempt.status)).toEqual(['failed']);

    // A worker: drained from the runs page filtered on it, then undrained.
    await startTestWorker(queue, { name: 'drain-box', resources: 'slot=1' });
    await page.goto(`${dashboard.origin}/runs?worker=drain-box`);
    expect(await act(page, 'drain-drain-box')).toEqual({ ok: 'true', status: 200, lines: ['Worker drain-box drained: it runs nothing and claims nothing more'] });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/drain-box\s+drained/);
    expect((await drainedAt(client, 'drain-box')) !== undefined).toBe(true);
    await page.getByTestId('action-back').click();
    expect(await page.getByTestId('worker-state-drain-box').textContent()).toContain('drained');
    expect(await act(page, 'undrain-drain-box')).toEqual({ ok: 'true', status: 200, lines: ['Worker drain-box undrained: it claims runs again'] });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/drain-box\s+active/);

    expect(consoleErrors).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('drains and undrains a worker from the workers page, its confirm step kept open through live refreshes, the page following live', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'wp-box', resources: 'slot=1' });
    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const watcher = await openBrowserPage(dashboard.origin);
    const { page } = watcher;
    await page.goto(`${dashboard.origin}/workers`);
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await page.evaluate('window.__notReloaded = true');
    expect(await page.getByTestId('worker-actions-panel').locator('details').evaluateAll((list) => list.map((item) => item.getAttribute('data-testid')))).toEqual(['action-drain-wp-box']);
    // Outside the live region: what a refresh replaces holds no action.
    expect(await page.getByTestId('workers').locator('[data-testid^="action-"]').count()).toBe(0);

    // The step opened, then the page refreshed live (a run staged, another worker joined): still open, nothing done.
    await page.getByTestId('action-drain-wp-box').locator('summary').click();
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'wp-staged' });
    await startTestWorker(queue, { name: 'wp-other', resources: 'slot=1' });
    await page.getByTestId('worker-wp-other').waitFor();
    await page.getByTestId('action-drain-wp-other').waitFor();
    expect(await page.getByTestId('action-drain-wp-box').getAttribute('open')).toBe('');
    await page.getByTestId('confirm-drain-wp-box').waitFor({ state: 'visible' });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/wp-box\s+active/);
    expect((await saveScreenshots(page, 'workers-actions'))['390x844']!.overflowX).toBeLessThanOrEqual(0);

    // Drained from another page: this one shows it without a reload, and now offers undrain.
    const other = await openBrowserPage(dashboard.origin);
    await other.page.goto(`${dashboard.origin}/workers`);
    expect(await act(other.page, 'drain-wp-box')).toEqual({ ok: 'true', status: 200, lines: ['Worker wp-box drained: it runs nothing and claims nothing more'] });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/wp-box\s+drained/);
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/wp-other\s+active/);
    await page.locator('[data-testid="worker-wp-box"][data-state="drained"]').waitFor();
    await page.getByTestId('action-undrain-wp-box').waitFor();
    expect(await page.getByTestId('action-drain-wp-box').count()).toBe(0);
    expect(await page.evaluate('window.__notReloaded === true')).toBe(true);

    // Undrained through this page's confirm step; its result leads back to the workers.
    expect(await act(page, 'undrain-wp-box')).toEqual({ ok: 'true', status: 200, lines: ['Worker wp-box undrained: it claims runs again'] });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/wp-box\s+active/);
    expect(await drainedAt(client, 'wp-box')).toBeUndefined();
    await page.getByTestId('action-back').click();
    await page.locator('[data-testid="worker-wp-box"][data-state="active"]').waitFor();
    await page.getByTestId('action-drain-wp-box').waitFor();
    expect(page.url()).toBe(`${dashboard.origin}/workers`);

    for (const { consoleErrors, blocked } of [watcher, other]) {
      expect(consoleErrors).toEqual([]);
      expect(blocked).toEqual([]);
    }
  });

  it("refuses a POST without the page's token or from another site, doing nothing", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'csrf-run' });
    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const { page } = await openBrowserPage(dashboard.origin);
    await runPage(page, dashboard.origin, queue, 'csrf-run');
    const token = await page.getByTestId('action-cancel').locator('input[name="action_token"]').getAttribute('value');
    expect(token).toMatch(/^[\w-]{20,}$/);
    const url = `${dashboard.origin}/actions/runs/${queue}/csrf-run/cancel`;
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) => fetch(url, { method: 'POST', body: new URLSearchParams(body), headers });

    const refusals = [
      await post({}),
      await post({ action_token: 'guessed' }),
      await post({ action_token: token! }, { 'Sec-Fetch-Site': 'cross-site' }),
      await post({ action_token: token! }, { Origin: 'http://evil.example' }),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('nothing was done');
    }
    expect((await cliStatus(queue, 'csrf-run')).status).toBe('staged');

    // The page's own token, from this origin: done.
    const done = await post({ action_token: token! }, { Origin: dashboard.origin, 'Sec-Fetch-Site': 'same-origin' });
    expect(done.status).toBe(200);
    expect((await cliStatus(queue, 'csrf-run')).status).toBe('canceled');
    // An unknown action, namespace or a bad id: no route.
    for (const path of [`runs/${queue}/csrf-run/delete`, `runs/nosuchqueue/csrf-run/cancel`, `workers/${queue}/a%20b/drain`]) {
      expect((await fetch(`${dashboard.origin}/actions/${path}`, { method: 'POST', body: new URLSearchParams({ action_token: token! }) })).status, path).toBe(404);
    }
  });

  it('with --token: the runs pages, their fragments, assets, the log stream and the actions are refused without it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'tok-run' });
    const token = 'runs-page-token';
    const dashboard = await startDashboard(queue, ['--allow-actions', '--token', token]);
    const paths = ['/runs', '/fragments/runs', `/runs/${queue}/tok-run`, `/fragments/runs/${queue}/tok-run`, `/runs/${queue}/tok-run/log`, '/assets/runs.css', '/assets/run-page.js', '/workers', '/fragments/workers/actions', '/assets/workers-page.js'];
    for (const path of paths) {
      expect((await fetch(`${dashboard.origin}${path}`)).status, `${path} without the token`).toBe(401);
      expect((await fetch(`${dashboard.origin}${path}`, { headers: { Authorization: 'Bearer wrong' } })).status, `${path} with a wrong token`).toBe(401);
    }
    for (const path of paths.filter((path) => !path.endsWith('/log'))) {
      expect((await fetch(`${dashboard.origin}${path}`, { headers: { Authorization: `Bearer ${token}` } })).status, `${path} with the token`).toBe(200);
    }
    const cancel = await fetch(`${dashboard.origin}/actions/runs/${queue}/tok-run/cancel`, { method: 'POST', body: new URLSearchParams({ action_token: 'x' }) });
    expect(cancel.status).toBe(401);
    expect((await cliStatus(queue, 'tok-run')).status).toBe('staged');
  });

  it("keeps an open confirm step through live refreshes, and offers a run's new actions when its status changes", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'live-act' });
    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const { page, consoleErrors } = await openBrowserPage(dashboard.origin);
    await runPage(page, dashboard.origin, queue, 'live-act');
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await page.getByTestId('action-cancel').locator('summary').click();

    // Another run staged: the live part of the page is fetched again; the open step stays open.
    const liveRegion = page.getByTestId('run-live');
    expect(await liveRegion.getAttribute('data-updated')).toBeNull();
    await client.stage({ command: ['true'], resources: 'gpu=1', runId: 'other-run' });
    await page.locator('[data-testid="run-live"][data-updated]').waitFor();
    expect(await page.getByTestId('action-cancel').getAttribute('open')).toBe('');
    await page.getByTestId('confirm-cancel').waitFor({ state: 'visible' });

    // Canceled from elsewhere: the page shows it, and now offers restart instead.
    await client.cancelRuns(['live-act']);
    await page.locator('[data-testid="run-status"]', { hasText: 'canceled' }).waitFor();
    await page.getByTestId('action-restart').waitFor();
    expect(await page.getByTestId('action-cancel').count()).toBe(0);
    expect(await page.evaluate('document.querySelector(\'[data-testid="run-actions-panel"]\').dataset.runStatus')).toBe('canceled');
    expect(consoleErrors).toEqual([]);
  });
});

async function drainedAt(client: FitqClient, name: string): Promise<number | undefined> {
  return (await client.listWorkers()).find((worker) => worker.name === name)?.drainedAt;
}
