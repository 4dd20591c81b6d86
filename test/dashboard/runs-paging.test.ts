/**
 * Paging through every run on the runs page of the real `fitq dashboard`,
 * in real headless Chromium: each view holds at most MAX_ROWS runs, links
 * to older and newer pages keeping the filters, says which of how many it
 * shows when nothing is selected (counted by the order index; runs selected
 * are not counted), and an older page stays put while new runs are staged
 * (its count follows). Bad page positions are refused naming them.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROWS } from '../../src/dashboard/run-list.js';
import type { FitqClient } from '../../src/client.js';
import { openBrowserPage, startDashboard } from '../support/browser.js';
import { connectClient, newQueue } from '../support/fitq.js';

async function stageMany(client: FitqClient, repeat: number, team: string): Promise<string[]> {
  const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1', repeat, labels: { team } });
  return runs.map((run) => run.id);
}

describe('dashboard runs page: paging', () => {
  it('pages through every matching run, older and newer, keeping the filters; a page stays put as runs are staged', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // 1,200 red runs with 20 blue ones among them: the filter must hold on every page.
    const red = await stageMany(client, 600, 'red');
    const blue = await stageMany(client, 20, 'blue');
    red.push(...(await stageMany(client, 600, 'red')));
    expect(MAX_ROWS).toBe(500);

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors, blocked } = await openBrowserPage(dashboard.origin);
    const shownIds = async () => (await page.locator('[data-testid^="run-row-"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-testid')!.slice('run-row-'.length))));
    const range = () => page.getByTestId(`run-range-${queue}`).textContent();
    const follow = async (link: string) => {
      const before = page.url();
      await page.getByTestId(`page-${link}-${queue}`).click();
      await page.waitForURL((url) => url.href !== before);
      expect(new URL(page.url()).searchParams.get('label'), 'the filter, kept').toBe('team=red');
      return new URL(page.url()).searchParams;
    };

    // Selected by label: pages of the runs that match, not counted (that would read every run).
    await page.goto(`${dashboard.origin}/runs?label=team%3Dred`);
    expect(await range()).toBe('500 matching runs here');
    expect(await shownIds()).toEqual(red.slice(700));
    expect(await page.getByTestId(`page-newer-${queue}`).count()).toBe(0);

    expect((await follow('older')).get('before')).toMatch(/^\d+$/);
    expect(await range()).toBe('500 matching runs here');
    expect(await shownIds()).toEqual(red.slice(200, 700));

    await follow('older');
    expect(await range()).toBe('200 matching runs here');
    expect(await shownIds()).toEqual(red.slice(0, 200));
    expect(await page.getByTestId(`page-older-${queue}`).count()).toBe(0);
    expect(await page.getByTestId(`page-oldest-${queue}`).count()).toBe(0);

    // Newer: the 500 after this page, then the last ones (no newer link at the end).
    expect((await follow('newer')).get('after')).toMatch(/^\d+$/);
    expect(await shownIds()).toEqual(red.slice(200, 700));
    await follow('newer');
    expect(await shownIds()).toEqual(red.slice(700));
    expect(await page.getByTestId(`page-newer-${queue}`).count()).toBe(0);

    // The oldest page, from there.
    expect((await follow('oldest')).get('after')).toBe('0');
    expect(await shownIds()).toEqual(red.slice(0, 500));

    // Nothing selected: counted by the order index; a page stays put while runs are staged, its count follows, live.
    const every = [...red.slice(0, 600), ...blue, ...red.slice(600)];
    await page.goto(`${dashboard.origin}/runs`);
    expect(await range()).toBe('runs 721–1220 of 1220');
    expect(await shownIds()).toEqual(every.slice(720));
    await page.getByTestId(`page-older-${queue}`).click();
    await page.waitForURL((url) => url.searchParams.has('before'));
    expect(await range()).toBe('runs 221–720 of 1220');
    await page.getByTestId('live-status').and(page.locator('[data-state="live"]')).waitFor();
    const [late] = await stageMany(client, 1, 'red');
    await page.getByTestId(`run-range-${queue}`).filter({ hasText: 'runs 221–720 of 1221' }).waitFor();
    expect(await shownIds()).toEqual(every.slice(220, 720));
    expect(late).toBeDefined();

    expect(consoleErrors).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('refuses a bad page position naming it (400), and, with several namespaces, one without the namespace', async () => {
    const [one, two] = [newQueue(), newQueue()];
    const dashboard = await startDashboard(one, ['--queue', one, '--queue', two]);
    const cases: [string, string][] = [
      ['before=abc', "invalid page position before='abc': expected a run's staging number (1 or more)"],
      ['after=-3', "invalid page position after='-3': expected a run's staging number (0 or more)"],
      [`queue=${one}&before=5&after=2`, 'give before or after, not both'],
      ['before=5', `before and after page through one namespace: give queue too (this dashboard shows ${one}, ${two})`],
    ];
    for (const [search, message] of cases) {
      const response = await fetch(`${dashboard.origin}/runs?${search}`);
      expect(response.status, search).toBe(400);
      expect(await response.text(), search).toContain(message.replace(/'/g, '&#39;'));
    }
    expect((await fetch(`${dashboard.origin}/runs?queue=${one}&before=5`)).status).toBe(200);
  });
});
