/**
 * Bull Board as the dashboard mounts it (mountBullBoard on a plain hono app,
 * served by @hono/node-server on a free port) on two fitq namespaces, opened
 * in real headless Chromium (Debian's `chromium`, never a downloaded one;
 * without it this test fails, it does not skip). Every request the page
 * makes goes to the dashboard's own origin (Bull Board's page asks Google
 * for fonts: the mount takes that out), the console stays free of errors,
 * and the board shows each namespace's staged, running, completed and failed
 * runs with the counts and ids `fitq runs` gives. Read-only, it has no
 * action button and its API refuses every change; with actions allowed, a
 * retry from the board stages the run again in fitq, and the actions fitq
 * does not follow are refused with why, which the board shows. Screenshots
 * go to test-output/screenshots/bull-board-* (test/support/browser.ts).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { mountBullBoard, type MountedBullBoard } from '../../src/dashboard/bull-board.js';
import type { FitqClient } from '../../src/client.js';
import { chromiumExecutable, openBrowserPage, saveScreenshots } from '../support/browser.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { FITQ_JOB_STATES, fitqRunsByState, recordEvents, stage, type EventRecorder, type FitqJobState } from '../support/bullmq.js';

const BASE_PATH = '/bull';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Served {
  origin: string;
  board: MountedBullBoard;
}

/** Mounts the board for `clients` on a plain hono app served on a free port. */
async function serveBoard(clients: ReadonlyMap<string, FitqClient>, readOnly: boolean): Promise<Served> {
  const app = new Hono();
  const board = mountBullBoard(app, { basePath: BASE_PATH, clients, readOnly, runHref: (namespace, id) => `/runs/${namespace}/${id}` });
  cleanups.push(() => board.close());
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening));
  });
  cleanups.push(async () => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, board };
}

/** The text of a status tab of the board (in main: the sidebar's queue link points at the current tab too) (`PRIORITIZED 1`; a tab with no job shows no count). */
async function tabText(page: Page, href: string): Promise<string> {
  return (await page.locator(`main a[href="${href}"]`).innerText()).replace(/\s+/g, ' ').trim();
}

/** Ids of the job cards on a queue's page. */
async function shownJobIds(page: Page, queuePath: string): Promise<string[]> {
  return (await page.locator(`a[href^="${queuePath}/"]`).allInnerTexts()).map((id) => id.trim()).sort();
}

/**
 * Bull Board's buttons that change a run or the queue: a job card's retry,
 * duplicate, edit and remove, retry all and clean all (by their icons), and
 * the queue's menu (add job, pause, empty, obliterate...).
 */
const ACTION_BUTTONS = [...['refresh-cw', 'files', 'pencil', 'trash-2'].map((icon) => `main button:has(svg.lucide-${icon})`), 'main button[aria-haspopup="menu"]'].join(', ');

interface Scene {
  queue: string;
  client: FitqClient;
  events: EventRecorder;
  ok: string;
  bad: string;
  sleeper: string;
  waiting: string;
}

/** A namespace with one run of each: one no worker fits, one that keeps running, one that completes, one that fails. */
async function runsOfEachState(): Promise<Scene> {
  const queue = newQueue();
  const client = await connectClient(queue);
  const events = await recordEvents(client);
  const [[ok, bad, sleeper], [waiting]] = await Promise.all([
    stage(queue, ['-r', 'slot=1', '--from-file', '-'], 'true\nexit 3\nsleep 600\n'),
    stage(queue, ['-r', 'huge=1', '--', 'true']),
  ]);
  await startTestWorker(queue, { name: 'board-w', resources: 'slot=3' });
  await Promise.all([events.next('completed', ok!), events.next('failed', bad!), events.next('active', sleeper!)]);
  return { queue, client, events, ok: ok!, bad: bad!, sleeper: sleeper!, waiting: waiting! };
}

/** Sends a request to Bull Board's API; returns its status and body. */
async function callApi(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}${BASE_PATH}/api${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

describe('Bull Board mounted in the dashboard', () => {
  it('read-only: only its own origin, no console error, each namespace with the ids and counts of fitq runs, no action, every change refused', async () => {
    chromiumExecutable(); // fails at once, before any setup, when chromium is missing
    const scene = await runsOfEachState();
    // A second namespace: its queue is named `runs` too, and is shown apart.
    const other = newQueue();
    const otherClient = await connectClient(other);
    const otherIds = (await stage(other, ['--repeat', '2', '-r', 'huge=1', '--', 'true'])).sort();

    const runs = await fitqRunsByState(scene.queue);
    expect(runs.statuses).toEqual({ staged: 1, running: 1, completed: 1, failed: 1 });
    expect(runs.ids).toEqual({ prioritized: [scene.waiting], active: [scene.sleeper], completed: [scene.ok], failed: [scene.bad] });

    const { origin, board } = await serveBoard(new Map([[scene.queue, scene.client], [other, otherClient]]), true);
    const { page, requests, consoleErrors: errors } = await openBrowserPage(origin);
    const queuePath = `${BASE_PATH}/queue/${encodeURIComponent(board.queueNames.get(scene.queue)!)}`;
    const tab = (state: string) => `${queuePath}?status=${state}`;

    // The overview: both namespaces, with their jobs.
    const total = FITQ_JOB_STATES.reduce((sum, state) => sum + runs.ids[state].length, 0);
    await page.goto(`${origin}${BASE_PATH}`);
    await page.getByText(`${total} Jobs`, { exact: true }).waitFor();
    await page.getByText(`${otherIds.length} Jobs`, { exact: true }).waitFor();
    await saveScreenshots(page, 'bull-board-overview');

    // The queue: its namespace's name heads it; each tab shows the count of its state and exactly its runs' ids.
    await page.locator(`nav a[href="${queuePath}"]`).click();
    await page.locator(`main a[href="${tab('active')}"]`).waitFor();
    await page.getByRole('heading', { name: scene.queue, exact: true }).waitFor();
    const counts = Object.fromEntries(FITQ_JOB_STATES.map((state) => [state, runs.ids[state].length])) as Record<FitqJobState, number>;
    for (const state of FITQ_JOB_STATES) {
      await page.locator(`main a[href="${tab(state)}"]`).click();
      const [expected] = runs.ids[state];
      await page.locator(`a[href^="${queuePath}/${expected}?"]`).waitFor();
      expect(await shownJobIds(page, queuePath), `ids on the ${state} tab`).toEqual(runs.ids[state]);
      expect(await tabText(page, tab(state))).toBe(`${state.toUpperCase()} ${counts[state]}`);
      // No button that would change a run or the queue.
      expect(await page.locator(ACTION_BUTTONS).count(), `action buttons on the ${state} tab`).toBe(0);
      expect(await page.getByRole('button', { name: /retry|clean|remove|promote|add job/i }).count(), `action buttons on the ${state} tab`).toBe(0);
    }
    for (const state of ['waiting', 'waiting-children', 'delayed']) {
      expect(await tabText(page, tab(state)), `the ${state} tab`).toBe(state.toUpperCase().replace('-', ' '));
    }

    // What the cards show: the failed run's reason, the completed run's exit code, the running run's worker.
    await page.locator(`main a[href="${tab('failed')}"]`).click();
    await page.getByText('failed: exit code 3', { exact: true }).waitFor();
    // The card links to the dashboard's page of the run.
    expect(await page.locator(`main a[href="/runs/${scene.queue}/${scene.bad}"]`).count()).toBe(1);
    await saveScreenshots(page, 'bull-board');
    await page.locator(`main a[href="${tab('completed')}"]`).click();
    await page.locator(`a[href^="${queuePath}/${scene.ok}?"]`).waitFor();
    expect(await page.locator('main').innerText()).toMatch(/returnValue:\s*0\b/);
    await page.locator(`main a[href="${tab('active')}"]`).click();
    await page.locator(`a[href^="${queuePath}/${scene.sleeper}?"]`).waitFor();
    expect(await page.locator('main').innerText()).toMatch(/Process started at\s+\S.*\s+by board-w/);

    // The other namespace: its own two staged runs only.
    const otherPath = `${BASE_PATH}/queue/${encodeURIComponent(board.queueNames.get(other)!)}`;
    await page.locator(`nav a[href="${otherPath}"]`).click();
    await page.locator(`main a[href="${otherPath}?status=prioritized"]`).click();
    await page.locator(`a[href^="${otherPath}/${otherIds[0]}?"]`).waitFor();
    expect(await shownJobIds(page, otherPath)).toEqual(otherIds);

    // Opened at a phone's width too.
    const phone = await openBrowserPage(origin, { viewport: { width: 390, height: 844 } });
    await phone.page.goto(`${origin}${tab('failed')}`);
    await phone.page.getByText('failed: exit code 3', { exact: true }).waitFor();

    // Only the dashboard's own origin, and no console error.
    for (const recorded of [{ requests, consoleErrors: errors }, phone]) {
      expect(recorded.requests.length).toBeGreaterThan(0);
      expect(recorded.requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
      expect(recorded.consoleErrors).toEqual([]);
    }

    // Bull Board's API refuses every change, saying why; fitq's runs are as they were.
    const name = encodeURIComponent(board.queueNames.get(scene.queue)!);
    const changes: [string, string][] = [
      ['PUT', `/queues/${name}/${scene.bad}/retry`],
      ['PUT', `/queues/${name}/retry/failed`],
      ['PUT', `/queues/${name}/${scene.ok}/clean`],
      ['PUT', `/queues/${name}/clean/completed`],
      ['PUT', `/queues/${name}/pause`],
      ['PUT', '/queues/pause'],
      ['PUT', `/queues/${name}/empty`],
    ];
    for (const [method, path] of changes) {
      const answer = await callApi(origin, method, path);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
      expect(answer.text).toContain('the dashboard is read-only');
    }
    expect(await callApi(origin, 'GET', `/queues/${name}/${scene.bad}`)).toMatchObject({ status: 200 });
    expect(await fitqRunsByState(scene.queue)).toEqual(runs);
    expect(await scene.client.isPaused()).toBe(false);
  }, 120_000);

  it("with actions: a retry from the board stages the run again in fitq; changes fitq does not follow are refused with why", async () => {
    chromiumExecutable();
    const scene = await runsOfEachState();
    const { origin, board } = await serveBoard(new Map([[scene.queue, scene.client]]), false);
    const { page, requests, consoleErrors: errors } = await openBrowserPage(origin);
    const name = board.queueNames.get(scene.queue)!;
    const queuePath = `${BASE_PATH}/queue/${encodeURIComponent(name)}`;

    await page.goto(`${origin}${queuePath}?status=failed`);
    await page.locator(`a[href^="${queuePath}/${scene.bad}?"]`).waitFor();
    await page.getByText('failed: exit code 3', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Retry all' }).count()).toBe(1);
    // The queue's menu, with its actions (add job, concurrency and rate limit are refused: below).
    await page.locator('main button[aria-haspopup="menu"]').click();
    expect((await page.getByRole('menu').innerText()).split('\n')).toEqual(expect.arrayContaining(['Add job', 'Pause', 'Empty', 'Obliterate']));
    await page.keyboard.press('Escape');

    // Refused, whatever the button: editing a run's data, adding a job (the card's duplicate), changing its delay.
    const data = await scene.client.redis.hget(scene.client.keys.run(scene.bad), 'data');
    const api = `/queues/${encodeURIComponent(name)}`;
    const refused: [string, string, unknown, RegExp][] = [
      ['PATCH', `${api}/${scene.bad}/update-data`, { command: ['echo', 'edited'] }, /fitq update/],
      ['POST', `${api}/add`, { name: 'run', data: { command: ['true'] }, options: {} }, /fitq stage/],
      ['PATCH', `${api}/${scene.waiting}/delay`, { delay: 1000 }, /--begin/],
      ['PUT', `${api}/concurrency`, { concurrency: 1 }, /resources they have free/],
    ];
    for (const [method, path, body, why] of refused) {
      const answer = await callApi(origin, method, path, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
      expect(answer.text).toMatch(why);
    }
    // The board's own duplicate button: refused, and the board says why.
    expect(errors).toEqual([]);
    await page.locator('main button:has(svg.lucide-files)').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Duplicate' }).click();
    await page.getByText("a job added from Bull Board is no fitq run: fitq would reject it without running it (stage runs with fitq stage)").waitFor();
    await saveScreenshots(page, 'bull-board-refused');
    // (The browser logs the refusal.)
    expect(errors.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 403 (Forbidden)']);
    expect(await scene.client.redis.hget(scene.client.keys.run(scene.bad), 'data')).toBe(data);
    expect((await fitqRunsByState(scene.queue)).statuses).toEqual({ staged: 1, running: 1, completed: 1, failed: 1 });

    // The failed run's retry button: fitq stages it again, its worker runs it again, it fails again.
    await page.locator('main button:has(svg.lucide-refresh-cw)').filter({ hasNotText: 'Retry all' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await scene.events.next('active', scene.bad, 2);
    await scene.events.next('failed', scene.bad, 2);
    expect(await scene.client.getRun(scene.bad)).toMatchObject({ status: 'failed', epoch: 2, reason: 'exit code 3' });
    // Its log says it was staged again, between its two attempts.
    expect((await scene.client.readLog(scene.bad)).map((entry) => entry.kind)).toEqual(['end', 'restaged', 'end']);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    expect(errors).toEqual([]);
  }, 120_000);
});
