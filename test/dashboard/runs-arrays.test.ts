/**
 * The runs page of the real `fitq dashboard` in real headless Chromium
 * reads a sweep as one row, as `fitq runs` prints it: the array's id with
 * its indices and limit (a link to the page of its runs), its runs counted
 * by status, its shared command; `expand=1` (the form's box) lists every
 * run, filters select runs before they are counted, and the row follows its
 * runs live.
 */
import { describe, expect, it } from 'vitest';
import { openBrowserPage, saveScreenshots, startDashboard } from '../support/browser.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

describe('dashboard runs page: an array is one row', () => {
  it('shows each array as fitq runs prints it, links to its runs, expands, filters, and follows it live', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs: [plain] } = await client.stage({ command: ['echo', 'plain'], resources: 'slot=1', runId: 'plain-run' });
    const { runs: sweep } = await client.stage({ command: ['python', 'train.py', '--lr', '{lr}'], resources: 'slot=1', array: { params: [{ lr: '0.1' }, { lr: '0.01' }, { lr: '0.001' }], limit: 2 } });
    const { runs: [last] } = await client.stage({ command: ['echo', 'last'], resources: 'slot=1', runId: 'last-run' });
    const arrayId = sweep[0]!.array!;

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors, blocked } = await openBrowserPage(dashboard.origin);
    const shownRows = async () => page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-testid')));

    await page.goto(`${dashboard.origin}/runs`);
    await page.getByTestId('live-status').and(page.locator('[data-state="live"]')).waitFor();
    expect(await shownRows()).toEqual([`run-row-${plain!.id}`, `array-row-${arrayId}`, `run-row-${last!.id}`]);
    // The row is the line fitq runs prints for the array.
    const cli = (await fitq(['runs', '--wide', '--columns', 'id,status,command'], { queue })).stdout.split('\n').find((line) => line.startsWith(arrayId))!;
    expect(cli.split(/\s{2,}/)).toEqual([`${arrayId}_[0-2%2]`, '3 staged', 'python train.py --lr {lr}']);
    expect(await page.getByTestId(`array-link-${arrayId}`).textContent()).toBe(`${arrayId}_[0-2%2]`);
    expect(await page.getByTestId(`array-status-${arrayId}`).textContent()).toBe('3 staged');
    expect(await page.getByTestId(`command-${arrayId}`).textContent()).toBe('python train.py --lr {lr}');
    expect(await page.getByTestId(`run-count-${queue}`).textContent()).toBe('5 runs');
    const sizes = await saveScreenshots(page, 'runs-arrays');
    expect(sizes['1280x800']!.overflowX, 'page wider than 1280').toBeLessThanOrEqual(0);
    expect(sizes['390x844']!.overflowX, 'page wider than a phone').toBeLessThanOrEqual(0);

    // Live: a run of the array canceled changes its row, with no reload.
    expect(await page.evaluate('window.__notReloaded = true')).toBe(true);
    await client.cancelRuns([sweep[1]!.id], { wait: true });
    await page.locator(`[data-testid="array-status-${arrayId}"]`, { hasText: '2 staged, 1 canceled' }).waitFor();
    expect(await page.evaluate('window.__notReloaded')).toBe(true);

    // Its id leads to its runs, one a row.
    await page.getByTestId(`array-link-${arrayId}`).click();
    await page.waitForURL(new RegExp(`array=${arrayId}`));
    expect(await shownRows()).toEqual(sweep.map((run) => `run-row-${run.id}`));

    // The form's box: every run its own row.
    await page.goto(`${dashboard.origin}/runs`);
    await page.getByTestId('filter-expand').check();
    await page.getByTestId('filter-apply').click();
    await page.waitForURL(/expand=1/);
    expect(await shownRows()).toEqual([plain!, ...sweep, last!].map((run) => `run-row-${run.id}`));

    // A filter selects runs before they are counted.
    await page.goto(`${dashboard.origin}/runs?status=canceled`);
    expect(await shownRows()).toEqual([`array-row-${arrayId}`]);
    expect(await page.getByTestId(`array-link-${arrayId}`).textContent()).toBe(`${arrayId}_[1%2]`);
    expect(await page.getByTestId(`array-status-${arrayId}`).textContent()).toBe('1 canceled');
    // Its link keeps the filter.
    expect(await page.getByTestId(`array-link-${arrayId}`).getAttribute('href')).toBe(`/runs?status=canceled&array=${arrayId}`);

    const refused = await page.goto(`${dashboard.origin}/runs?expand=yes`);
    expect(refused?.status()).toBe(400);
    expect(await page.getByTestId('filter-error').textContent()).toBe("invalid expand='yes': expected 1 (every run its own row)");
    expect(consoleErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    expect(blocked).toEqual([]);
  });
});
