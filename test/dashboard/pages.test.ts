/**
 * The dashboard in real headless Chromium (Debian's, see
 * test/support/browser.ts) against the real `fitq dashboard` process and
 * real workers: counts, bars and the GPU map follow runs as they are
 * staged, start and end, without a reload; a run in the GPU map or a
 * worker's list opens that run's page; no console error, nothing
 * fetched from elsewhere; screenshots of each page at 1280×800 and 390×844
 * under test-output/screenshots/.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { chromiumExecutable, openBrowserPage, saveScreenshots, startDashboard, type BrowserPage } from '../support/browser.js';
import { connectClient, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/** Runs that wait until their gate file exists, so a test ends each when it chooses. */
class Gates {
  private readonly dir = mkdtempSync(join(tmpdir(), 'fitq-dash-gates-'));
  path(name: string): string {
    return join(this.dir, name);
  }
  command(name: string, ...rest: string[]): string[] {
    return ['sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', this.path(name), ...rest];
  }
  open(name: string): void {
    writeFileSync(this.path(name), '');
  }
}

/** Waits until the element at `selector` (inside the namespace's section) has exactly `text`. */
async function waitText(page: Page, selector: string, text: string): Promise<void> {
  await page.locator(selector).filter({ hasText: new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) }).first().waitFor();
}

const count = (queue: string, status: string) => `[data-testid="ns-${queue}"] [data-testid="count-${status}"]`;

/** Opens `path` and waits until the page says it is live; marks the window, so a reload would show. */
async function openLive(origin: string, path: string): Promise<BrowserPage> {
  const opened = await openBrowserPage(origin);
  opened.page.on('dialog', (dialog) => {
    opened.consoleErrors.push(`a dialog opened: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await opened.page.goto(`${origin}${path}`);
  await opened.page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
  await opened.page.evaluate('window.__notReloaded = true');
  return opened;
}

async function expectNotReloaded(opened: BrowserPage): Promise<void> {
  expect(await opened.page.evaluate('window.__notReloaded === true'), 'the page was not reloaded').toBe(true);
}

function expectClean(...pages: BrowserPage[]): void {
  for (const { consoleErrors, blocked } of pages) {
    expect(consoleErrors, 'console errors').toEqual([]);
    expect(blocked, 'requests off the dashboard').toEqual([]);
  }
}

/** Screenshots at both sizes; at the phone width nothing is wider than the screen. */
async function screenshots(opened: BrowserPage, name: string): Promise<void> {
  const sizes = await saveScreenshots(opened.page, name);
  expect(sizes['390x844']!.overflowX, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
  expect(sizes['1280x800']!.overflowX, `${name} scrolls sideways at 1280 px`).toBeLessThanOrEqual(0);
}

/** On a fresh /workers page, clicks the link at `selector`: it opens the page of run `id` of `queue`, showing `status`. */
async function opensRunPage(origin: string, queue: string, selector: string, id: string, status: string): Promise<void> {
  const opened = await openBrowserPage(origin);
  await opened.page.goto(`${origin}/workers`);
  const [response] = await Promise.all([
    opened.page.waitForResponse((candidate) => candidate.request().isNavigationRequest()),
    opened.page.locator(selector).click(),
  ]);
  expect(response.url(), selector).toBe(`${origin}/runs/${queue}/${id}`);
  expect(response.status(), selector).toBe(200);
  expect(await opened.page.locator('h1').innerText()).toBe(`Run ${id}`);
  expect(await opened.page.getByTestId('run-status').innerText()).toBe(status);
  expectClean(opened);
}

async function runningDevices(client: FitqClient, id: string): Promise<number[]> {
  const run = await client.getRun(id);
  expect(run.status).toBe('running');
  return run.devices ?? [];
}

describe('dashboard pages in Chromium', () => {
  it('follows runs live on the overview and the workers page as they are staged, start and end', async () => {
    chromiumExecutable(); // fails at once when chromium is missing
    const queue = newQueue();
    const client = await connectClient(queue);
    const gates = new Gates();
    const dashboard = await startDashboard(queue);
    const overview = await openLive(dashboard.origin, '/');
    const workers = await openLive(dashboard.origin, '/workers');
    await waitText(overview.page, count(queue, 'staged'), '0');
    await workers.page.locator(`[data-testid="ns-${queue}"] [data-testid="no-workers"]`).waitFor();

    // Staged: three runs of one shape, one with a hostile command line.
    const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)> ${'wide-'.repeat(200)}`;
    const { runs } = await client.stage([
      { command: gates.command('a', hostile), resources: 'slot=1 mem=1G' },
      { command: gates.command('b'), resources: 'slot=1 mem=1G' },
      { command: gates.command('c'), resources: 'slot=1 mem=1G' },
    ]);
    const [a, b, c] = runs.map((run) => run.id) as [string, string, string];
    await waitText(overview.page, count(queue, 'staged'), '3');
    await waitText(overview.page, `[data-testid="ns-${queue}"] [data-testid="shape-count"]`, '3');
    expect(await overview.page.locator(`[data-testid="ns-${queue}"] [data-testid="staged-shapes"] td`).first().innerText()).toBe('mem=1G slot=1');
    expect(await overview.page.locator(`[data-testid="ns-${queue}"] [data-testid="shape-why"]`).innerText()).toBe((await client.listRuns({ statuses: ['staged'] }))[0]!.reason);

    // A worker with room for two: two start, one waits.
    await startTestWorker(queue, { name: 'w-live', resources: 'slot=2 mem=4G' });
    await waitText(overview.page, count(queue, 'running'), '2');
    await waitText(overview.page, count(queue, 'staged'), '1');
    const slotBar = workers.page.locator('[data-testid="bar-w-live-slot"]');
    await workers.page.locator('[data-testid="bar-w-live-slot"][data-used="2"][data-capacity="2"]').waitFor();
    await workers.page.locator('[data-testid="bar-w-live-mem"][data-used="2000000000"]').waitFor();
    expect(await workers.page.locator('[data-testid="worker-w-live"] [data-testid="worker-state"]').innerText()).toBe('active');
    expect(await workers.page.locator(`[data-testid="worker-run-${a}"]`).count()).toBe(1);
    // The hostile command is text on the page, nothing ran.
    expect(await workers.page.locator(`[data-testid="worker-run-${a}"] .cmd`).innerText()).toContain('<script>alert("x")</script><img src=x onerror=alert(1)>');
    await screenshots(workers, 'workers-runs');

    // The first ends: the third starts in its place.
    gates.open('a');
    await waitText(overview.page, count(queue, 'completed'), '1');
    await waitText(overview.page, count(queue, 'staged'), '0');
    await workers.page.locator(`[data-testid="worker-run-${c}"]`).waitFor();
    await workers.page.locator(`[data-testid="worker-run-${a}"]`).waitFor({ state: 'detached' });
    await overview.page.locator(`[data-testid="ns-${queue}"] [data-testid="shapes-empty"]`).waitFor();

    // All end: nothing reserved.
    gates.open('b');
    gates.open('c');
    await waitText(overview.page, count(queue, 'completed'), '3');
    await waitText(overview.page, count(queue, 'running'), '0');
    await workers.page.locator('[data-testid="bar-w-live-slot"][data-used="0"]').waitFor();
    expect(await slotBar.getAttribute('data-capacity')).toBe('2');
    await overview.page.locator(`[data-testid="ns-${queue}"] [data-testid="activity-summary"]`).filter({ hasText: /^3 started, 3 ended in the last hour; median duration / }).waitFor();
    expect(await overview.page.locator(`[data-testid="ns-${queue}"] [data-testid="activity-chart"] rect.started`).count()).toBeGreaterThan(0);
    expect(b).not.toBe(c);

    // Drained and undrained (fitq drain / undrain), seen live.
    const state = workers.page.locator('[data-testid="worker-w-live"] [data-testid="worker-state"]');
    await client.setDrained(['w-live'], true);
    await workers.page.locator('[data-testid="worker-w-live"][data-state="drained"]').waitFor();
    expect(await state.innerText()).toBe('drained');
    await client.setDrained(['w-live'], false);
    await workers.page.locator('[data-testid="worker-w-live"][data-state="active"]').waitFor();

    await expectNotReloaded(overview);
    await expectNotReloaded(workers);
    await screenshots(overview, 'overview');
    expectClean(overview, workers);
  });

  it('maps GPU devices whole, fractional and free with the runs holding them, and the blocked head a worker holds them for', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const gates = new Gates();
    const dashboard = await startDashboard(queue);
    await startTestWorker(queue, { name: 'w-gpu', gpus: '0,1,2,3', resources: 'mem=32G' });
    const workers = await openLive(dashboard.origin, '/workers');
    const device = (index: number) => workers.page.locator(`[data-testid="gpu-w-gpu-${index}"]`);
    for (const index of [0, 1, 2, 3]) expect(await device(index).getAttribute('data-state')).toBe('free');

    // Two whole devices for one run, half of another for a second.
    const { runs } = await client.stage([
      { command: gates.command('two'), resources: 'gpu=2 mem=8G' },
      { command: gates.command('half'), resources: 'gpu=0.5' },
    ]);
    const [two, half] = runs.map((run) => run.id) as [string, string];
    await workers.page.locator(`[data-testid="worker-run-${two}"]`).waitFor();
    await workers.page.locator(`[data-testid="worker-run-${half}"]`).waitFor();
    const twoDevices = await runningDevices(client, two);
    const halfDevices = await runningDevices(client, half);
    expect(twoDevices).toHaveLength(2);
    expect(halfDevices).toHaveLength(1);
    const expected = (index: number) =>
      twoDevices.includes(index) ? { state: 'busy', runs: two } : halfDevices.includes(index) ? { state: 'partial', runs: half } : { state: 'free', runs: '' };
    for (const index of [0, 1, 2, 3]) {
      const { state, runs: holders } = expected(index);
      await workers.page.locator(`[data-testid="gpu-w-gpu-${index}"][data-state="${state}"][data-runs="${holders}"]`).waitFor();
    }
    expect(await device(halfDevices[0]!).innerText()).toContain('0.5 in use');
    await workers.page.locator('[data-testid="bar-w-gpu-gpu"][data-used="2.5"][data-capacity="4"]').waitFor();
    // Each run on the map and in the worker's list is a link to its page (in its namespace).
    await opensRunPage(dashboard.origin, queue, `[data-testid="gpu-w-gpu-${twoDevices[0]!}"] a.gpu-run`, two, 'running');
    await opensRunPage(dashboard.origin, queue, `[data-testid="gpu-w-gpu-${halfDevices[0]!}"] a.gpu-run`, half, 'running');
    await opensRunPage(dashboard.origin, queue, `[data-testid="worker-run-${two}"] a`, two, 'running');
    // The worker's name opens the runs page filtered on it: its two runs.
    const byName = await openBrowserPage(dashboard.origin);
    await byName.page.goto(`${dashboard.origin}/workers`);
    await byName.page.locator('[data-testid="worker-w-gpu"] a.worker-name').click();
    await byName.page.getByTestId(`run-row-${two}`).waitFor();
    expect(byName.page.url()).toBe(`${dashboard.origin}/runs?queue=${queue}&worker=w-gpu`);
    expect(await byName.page.locator('[data-testid^="run-row-"]').count()).toBe(2);
    expectClean(byName);

    // A run needing all four is the blocked head: the worker holds what is free for it.
    const { runs: [big] } = await client.stage({ command: gates.command('big'), resources: 'gpu=4' });
    const holding = workers.page.locator('[data-testid="holding-w-gpu"]');
    await holding.waitFor();
    expect(await holding.innerText()).toContain(`blocked head ${big!.id}: it needs gpu=4`);
    await opensRunPage(dashboard.origin, queue, '[data-testid="holding-w-gpu"] a', big!.id, 'staged');
    await workers.page.locator('[data-testid="bar-w-gpu-gpu"][data-held="1.5"]').waitFor();
    await screenshots(workers, 'workers');

    // The two end: the head takes every device.
    gates.open('two');
    gates.open('half');
    await workers.page.locator(`[data-testid="worker-run-${big!.id}"]`).waitFor();
    for (const index of [0, 1, 2, 3]) {
      await workers.page.locator(`[data-testid="gpu-w-gpu-${index}"][data-state="busy"][data-runs="${big!.id}"]`).waitFor();
    }
    await holding.waitFor({ state: 'detached' });
    gates.open('big');
    for (const index of [0, 1, 2, 3]) await workers.page.locator(`[data-testid="gpu-w-gpu-${index}"][data-state="free"][data-runs=""]`).waitFor();

    await expectNotReloaded(workers);
    expectClean(workers);
  });

  it("shows users' quotas, each limit against what the user's runs hold, as they change", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const alice = await connectClient(queue, redisUrl(), { user: 'alice' });
    const gates = new Gates();
    const dashboard = await startDashboard(queue, ['--queue', queue]);
    const pools = await openLive(dashboard.origin, '/pools');
    await pools.page.locator(`[data-testid="ns-${queue}"] [data-testid="pool-empty"]`).waitFor();
    expect(await pools.page.locator('[data-testid^="quota-"]').count()).toBe(0);

    await client.setQuota({ user: 'alice' }, ['gpu=2', 'running=3']);
    await client.setQuota({ default: true }, ['running=1']);
    await pools.page.locator('[data-testid="quota-alice-gpu"][data-used="0"][data-capacity="2"]').waitFor();
    await pools.page.locator('[data-testid="quota-alice-running"][data-used="0"][data-capacity="3"]').waitFor();
    expect((await pools.page.locator('[data-testid="quota-.default"]').innerText()).split('\n').filter(Boolean)).toEqual(['Everyone else (default)', 'running=1']);
    await startTestWorker(queue, { name: 'w-quota', resources: 'gpu=4' });
    await alice.stage({ command: gates.command('q'), resources: 'gpu=1', repeat: 3 });
    await pools.page.locator('[data-testid="quota-alice-gpu"][data-used="2"]').waitFor();
    await pools.page.locator('[data-testid="quota-alice-running"][data-used="2"]').waitFor();
    await screenshots(pools, 'pools-quotas');

    gates.open('q');
    await pools.page.locator('[data-testid="quota-alice-gpu"][data-used="0"]').waitFor();
    await expectNotReloaded(pools);
    expectClean(pools);
  });

  it('shows namespaces side by side and pool capacity and use as they change', async () => {
    const [first, second] = [newQueue(), newQueue()];
    const client = await connectClient(first);
    const other = await connectClient(second);
    const gates = new Gates();
    const dashboard = await startDashboard(first, ['--queue', first, '--queue', second]);
    const pools = await openLive(dashboard.origin, '/pools');
    await pools.page.locator(`[data-testid="ns-${first}"] [data-testid="pool-empty"]`).waitFor();
    await pools.page.locator(`[data-testid="ns-${second}"] [data-testid="pool-empty"]`).waitFor();

    await client.setPool('licence=4');
    await pools.page.locator('[data-testid="pool-licence"][data-used="0"][data-capacity="4"]').waitFor();
    await startTestWorker(first, { name: 'w-pool', resources: 'cpu=4' });
    const { runs } = await client.stage({ command: gates.command('lic'), resources: 'licence=3 cpu=1' });
    await pools.page.locator('[data-testid="pool-licence"][data-used="3"]').waitFor();
    expect(await pools.page.locator(`[data-testid="ns-${second}"] [data-testid="pool-licence"]`).count()).toBe(0);
    await screenshots(pools, 'pools');

    // Both namespaces on the overview, side by side at desktop width.
    await other.stage({ command: ['true'], resources: 'huge=1' });
    const overview = await openLive(dashboard.origin, '/');
    await waitText(overview.page, count(first, 'running'), '1');
    await waitText(overview.page, count(second, 'staged'), '1');
    // Why it waits: the same words as `fitq runs`.
    const [waiting] = await other.listRuns({ statuses: ['staged'] });
    expect(waiting!.reason).toBeTruthy();
    expect((await overview.page.locator(`[data-testid="ns-${second}"] [data-testid="shape-why"]`).innerText()).trim()).toBe(waiting!.reason);
    // (A live update may be swapping a section in as the boxes are read: read again until both are laid out.)
    const [left, right] = await waitFor('both namespaces laid out', async () => {
      const boxes = await Promise.all([first, second].map((queue) => overview.page.locator(`[data-testid="ns-${queue}"]`).boundingBox()));
      return boxes.every((box) => box !== null) && boxes;
    });
    expect(right!.x).toBeGreaterThan(left!.x + left!.width - 1);
    expect(Math.abs(right!.y - left!.y)).toBeLessThan(2);
    await screenshots(overview, 'overview-namespaces');

    gates.open('lic');
    await pools.page.locator('[data-testid="pool-licence"][data-used="0"]').waitFor();
    await waitText(overview.page, count(first, 'completed'), '1');
    expect(runs).toHaveLength(1);
    await expectNotReloaded(pools);
    await expectNotReloaded(overview);
    expectClean(pools, overview);
  });
});
