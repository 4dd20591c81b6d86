/**
 * Bull Board pointed at a fitq namespace (BullMQ prefix `fitq:{QUEUE}`, queue
 * `runs`), served on a free port and opened in real headless Chromium: the
 * page shows one staged, one running, one completed and one failed run, each
 * in its tab, with the counts and ids `fitq runs` gives. Chromium is Debian's
 * (`apt-get install chromium`), never a downloaded one; without it this test
 * fails, it does not skip.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { chromiumExecutable, openBrowserPage } from '../support/browser.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { FITQ_JOB_STATES, fitqRunsByState, openRunQueue, recordEvents, stage, type FitqJobState } from '../support/bullmq.js';

const BASE_PATH = '/board';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Serves Bull Board for `adapter` under BASE_PATH on a free port; returns the server's origin. */
async function serveBoard(adapter: BullMQAdapter): Promise<string> {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BASE_PATH);
  createBullBoard({ queues: [adapter], serverAdapter });
  const app = express();
  app.use(BASE_PATH, serverAdapter.getRouter());
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A page in headless Chromium that reaches only `origin` (the board's web fonts are not fetched). */
async function openPage(origin: string): Promise<Page> {
  return (await openBrowserPage(origin)).page;
}

/** The text of a status tab of the board (in main: the sidebar's queue link points at the current tab too) (`PRIORITIZED 1`; a tab with no job shows no count). */
async function tabText(page: Page, href: string): Promise<string> {
  return (await page.locator(`main a[href="${href}"]`).innerText()).replace(/\s+/g, ' ').trim();
}

/** Ids of the job cards on the page. */
async function shownJobIds(page: Page): Promise<string[]> {
  return (await page.locator(`a[href^="${BASE_PATH}/queue/runs/"]`).allInnerTexts()).map((id) => id.trim()).sort();
}

describe('Bull Board on a fitq namespace', () => {
  it('shows staged runs as prioritized, running as active, completed and failed runs, with the ids and counts of fitq runs', async () => {
    chromiumExecutable(); // fails at once, before any setup, when chromium is missing
    const queue = newQueue();
    const client = await connectClient(queue);
    const events = await recordEvents(client);

    // One run of each: one no worker fits, one that keeps running, one that completes, one that fails.
    const [[ok, bad, sleeper], [waiting]] = await Promise.all([
      stage(queue, ['-r', 'slot=1', '--from-file', '-'], 'true\nexit 3\nsleep 30\n'),
      stage(queue, ['-r', 'huge=1', '--', 'true']),
    ]);
    await startTestWorker(queue, { name: 'board-w', resources: 'slot=3' });
    await Promise.all([events.next('completed', ok!), events.next('failed', bad!), events.next('active', sleeper!)]);

    const runs = await fitqRunsByState(queue);
    expect(runs.statuses).toEqual({ staged: 1, running: 1, completed: 1, failed: 1 });
    expect(runs.ids).toEqual({ prioritized: [waiting], active: [sleeper], completed: [ok], failed: [bad] });

    const bull = openRunQueue(client);
    const origin = await serveBoard(new BullMQAdapter(bull, { readOnlyMode: true }));
    const page = await openPage(origin);
    const tab = (state: string) => `${BASE_PATH}/queue/runs?status=${state}`;

    // The overview: the one queue, `runs`, with its four jobs.
    const total = FITQ_JOB_STATES.reduce((sum, state) => sum + runs.ids[state].length, 0);
    await page.goto(`${origin}${BASE_PATH}`);
    await page.getByText(`${total} Jobs`, { exact: true }).waitFor();
    const queueLink = page.locator('nav a[title="runs"]');
    expect(await queueLink.innerText()).toBe('runs');

    // The queue: each tab shows the count of its state and exactly its runs' ids.
    await queueLink.click();
    await page.locator(`main a[href="${tab('active')}"]`).waitFor();
    const counts = Object.fromEntries(FITQ_JOB_STATES.map((state) => [state, runs.ids[state].length])) as Record<FitqJobState, number>;
    for (const state of FITQ_JOB_STATES) {
      await page.locator(`main a[href="${tab(state)}"]`).click();
      const [expected] = runs.ids[state];
      await page.locator(`a[href^="${BASE_PATH}/queue/runs/${expected}?"]`).waitFor();
      expect(await shownJobIds(page), `ids on the ${state} tab`).toEqual(runs.ids[state]);
      expect(await tabText(page, tab(state))).toBe(`${state.toUpperCase()} ${counts[state]}`);
    }
    for (const state of ['waiting', 'waiting-children', 'delayed']) {
      expect(await tabText(page, tab(state)), `the ${state} tab`).toBe(state.toUpperCase().replace('-', ' '));
    }

    // What the cards show: the failed run's reason, the completed run's exit code, the running run's worker.
    await page.locator(`main a[href="${tab('failed')}"]`).click();
    await page.getByText('failed: exit code 3', { exact: true }).waitFor();
    await page.locator(`main a[href="${tab('completed')}"]`).click();
    await page.locator(`a[href^="${BASE_PATH}/queue/runs/${ok}?"]`).waitFor();
    expect(await page.locator('main').innerText()).toMatch(/returnValue:\s*0\b/);
    await page.locator(`main a[href="${tab('active')}"]`).click();
    await page.locator(`a[href^="${BASE_PATH}/queue/runs/${sleeper}?"]`).waitFor();
    expect(await page.locator('main').innerText()).toMatch(/Process started at\s+\S.*\s+by board-w/);
  });
});
