/**
 * The runs page of the real `fitq dashboard` in real headless Chromium,
 * against real workers: the why column says what `fitq runs` says for a run
 * waiting on a busy resource and one waiting on a dependency, the table
 * follows new runs live (no reload), the filters select what they say and
 * a bad one is refused naming it, hostile commands and labels render as
 * text, and the page reads at a desktop and a phone width with no console
 * errors.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { openBrowserPage, saveScreenshots, startDashboard } from '../support/browser.js';
import { cliWhy, connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';


async function runningOn(client: FitqClient, id: string): Promise<void> {
  await waitFor(`run ${id} to start`, async () => (await client.getRun(id)).status === 'running');
}

const HOSTILE_COMMAND = `echo '<script>window.__pwned=1</script>' "it's \\"quoted\\"" ${'x'.repeat(3000)}`;

describe('dashboard runs page', () => {
  it("shows fitq runs' why text, follows new runs live, filters, and renders hostile text as text", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'gpu-box', resources: 'gpu=1' });
    const { runs: [busy] } = await client.stage({ command: ['sleep', '60'], resources: 'gpu=1', runId: 'busy-run', labels: { team: 'red' } });
    await runningOn(client, busy!.id);
    const { runs: [waiting] } = await client.stage({ command: ['python', 'train.py'], resources: 'gpu=1', runId: 'waits-gpu', labels: { team: 'blue' } });
    const { runs: [dependent] } = await client.stage({ command: ['python', 'eval.py'], resources: 'gpu=1', runId: 'waits-dep', after: [{ kind: 'ok', ids: ['waits-gpu'] }] });
    const { runs: [hostile] } = await client.stage({
      command: ['sh', '-c', HOSTILE_COMMAND],
      resources: 'gpu=1',
      runId: 'hostile',
      labels: { note: `<script>alert(1)</script> "quoted' <b>bold</b> ${'y'.repeat(500)}` },
      hold: true,
    });

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors, blocked } = await openBrowserPage(dashboard.origin);
    await page.goto(`${dashboard.origin}/runs`);
    await page.getByTestId('live-status').and(page.locator('[data-state="live"]')).waitFor();

    // The why column: word for word what fitq runs prints.
    const cli = await cliWhy(queue);
    expect(cli.get(waiting!.id)).toBe('next in line on gpu-box: waiting for gpu=1 > 0 free');
    expect(cli.get(dependent!.id)).toBe('waiting for dependency waits-gpu (staged)');
    for (const run of [busy!, waiting!, dependent!, hostile!]) {
      expect(await page.getByTestId(`why-${run.id}`).textContent(), `why of ${run.id}`).toBe(cli.get(run.id));
    }

    // Hostile text is text: shown as typed, never markup, never run.
    expect(await page.getByTestId(`command-${hostile!.id}`).textContent()).toContain(`<script>window.__pwned=1</script>`);
    expect(await page.getByTestId(`labels-${hostile!.id}`).textContent()).toContain(`note="<script>alert(1)</script> \\"quoted' <b>bold</b> yyy`);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.locator('main b').count()).toBe(0);
    expect(await page.evaluate('window.__pwned === undefined')).toBe(true);

    const sizes = await saveScreenshots(page, 'runs');
    expect(sizes['1280x800']!.overflowX, 'page wider than 1280').toBeLessThanOrEqual(0);
    expect(sizes['390x844']!.overflowX, 'page wider than a phone').toBeLessThanOrEqual(0);

    // Live: a run staged now appears, and one that ends changes, with no reload.
    const marker = await page.evaluate('window.__notReloaded = true');
    expect(marker).toBe(true);
    const { runs: [late] } = await client.stage({ command: ['echo', 'late'], resources: 'gpu=1', runId: 'late-run' });
    await page.getByTestId(`run-row-${late!.id}`).waitFor();
    expect(await page.getByTestId(`why-${late!.id}`).textContent()).toBe((await cliWhy(queue)).get(late!.id));
    await client.cancelRuns([busy!.id], { wait: true });
    await page.locator(`[data-testid="status-${busy!.id}"]`, { hasText: 'canceled' }).waitFor();
    await page.locator(`[data-testid="why-${waiting!.id}"]`, { hasNotText: 'next in line' }).waitFor();
    expect(await page.evaluate('window.__notReloaded')).toBe(true);

    expect(consoleErrors).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('filters by status, label, array, worker and text through the form and the address, and refuses a bad filter naming it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'filter-box', resources: 'slot=1' });
    const { runs: [running] } = await client.stage({ command: ['sleep', '60'], resources: 'slot=1', runId: 'f-running', labels: { team: 'red' } });
    await runningOn(client, running!.id);
    await client.stage({ command: ['python', 'train.py', '--lr', '0.1'], resources: 'slot=1', runId: 'f-train', labels: { team: 'blue', sweep: 'lr' } });
    await client.stage({ command: ['echo', 'held'], resources: 'slot=1', runId: 'f-held', labels: { team: 'blue' }, hold: true });
    const { runs: array } = await client.stage({ command: ['echo', '{i}'], resources: 'slot=1', array: { params: [{ i: '1' }, { i: '2' }] } });

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors } = await openBrowserPage(dashboard.origin);
    const shownIds = async () =>
      (await page.locator('[data-testid^="run-row-"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-testid')))).map((id) => String(id).slice('run-row-'.length));

    // Every run its own row (by default the array is one: runs-arrays.test.ts).
    await page.goto(`${dashboard.origin}/runs?expand=1`);
    expect(await shownIds()).toEqual(['f-running', 'f-train', 'f-held', ...array.map((run) => run.id)]);

    // The form: a status box and a label.
    await page.getByTestId('filter-status-held').check();
    await page.getByTestId('filter-status-staged').check();
    await page.getByTestId('filter-label').fill('team=blue');
    await page.getByTestId('filter-apply').click();
    await page.waitForURL(/status=held/);
    expect(await shownIds()).toEqual(['f-train', 'f-held']);
    expect(await page.getByTestId('filter-status-held').isChecked()).toBe(true);
    expect(await page.getByTestId('filter-label').inputValue()).toBe('team=blue');

    // Text search over the command, then the label text.
    await page.goto(`${dashboard.origin}/runs`);
    await page.getByTestId('filter-text').fill('TRAIN.PY');
    await page.getByTestId('filter-apply').click();
    await page.waitForURL(/q=TRAIN.PY/);
    expect(await shownIds()).toEqual(['f-train']);
    await page.goto(`${dashboard.origin}/runs?q=sweep%3Dlr`);
    expect(await shownIds()).toEqual(['f-train']);

    // Array (a prefix of its id) and worker.
    await page.goto(`${dashboard.origin}/runs?array=${array[0]!.array!.slice(0, 5)}`);
    expect(await shownIds()).toEqual(array.map((run) => run.id));
    await page.goto(`${dashboard.origin}/runs?worker=filter-box`);
    expect(await shownIds()).toEqual(['f-running']);
    await page.goto(`${dashboard.origin}/runs?worker=nobody`);
    expect(await shownIds()).toEqual([]);
    await page.getByTestId('no-runs').waitFor();

    // A bad filter: refused, named, nothing listed.
    const response = await page.goto(`${dashboard.origin}/runs?status=runing`);
    expect(response?.status()).toBe(400);
    expect(await page.getByTestId('filter-error').textContent()).toBe(
      "unknown status 'runing': choose from staged, held, running, completed, failed, canceled, lost, rejected, timeout",
    );
    expect(await shownIds()).toEqual([]);
    await page.goto(`${dashboard.origin}/runs?label=team`);
    expect(await page.getByTestId('filter-error').textContent()).toBe("invalid label 'team': expected KEY=VALUE");
    await page.goto(`${dashboard.origin}/runs?array=zzzz`);
    expect(await page.getByTestId('filter-error').textContent()).toBe("unknown array 'zzzz' (no run of the namespace is part of it)");
    // The fragment the live script re-fetches refuses the same way.
    const fragment = await fetch(`${dashboard.origin}/fragments/runs?status=runing`);
    expect(fragment.status).toBe(400);
    expect(await fragment.text()).toContain('unknown status &#39;runing&#39;');
    // Chromium notes each refused page (the three 400s above), and nothing else.
    expect(consoleErrors).toEqual(Array.from({ length: 3 }, () => 'Failed to load resource: the server responded with a status of 400 (Bad Request)'));
  });

  it('shows several namespaces, each its own table, and one with queue=NAME (an unknown one refused)', async () => {
    const [first, second] = [newQueue(), newQueue()];
    await (await connectClient(first)).stage({ command: ['echo', 'one'], resources: 'gpu=1', runId: 'in-first' });
    const { runs: array } = await (await connectClient(second)).stage({ command: ['echo', '{i}'], resources: 'gpu=1', array: { params: [{ i: '1' }] } });
    await (await connectClient(second)).stage({ command: ['echo', 'two'], resources: 'gpu=1', runId: 'in-second' });
    const dashboard = await startDashboard(first, ['--queue', first, '--queue', second]);
    const page = async (path: string) => {
      const response = await fetch(`${dashboard.origin}${path}`);
      return { status: response.status, text: await response.text() };
    };
    const all = await page('/runs');
    expect(all.status).toBe(200);
    expect(all.text).toContain(`data-testid="runs-${first}"`);
    expect(all.text).toContain(`data-testid="runs-${second}"`);
    expect(all.text).toContain(`href="/runs/${first}/in-first"`);
    expect(all.text).toContain(`href="/runs/${second}/in-second"`);
    const one = await page(`/runs?queue=${second}`);
    expect(one.text).not.toContain(`data-testid="runs-${first}"`);
    expect(one.text).toContain('data-testid="run-row-in-second"');
    expect(one.text).toContain(`data-live="/fragments/runs?queue=${second}"`);
    expect(await page(`/runs/${second}/in-second`)).toMatchObject({ status: 200 });
    expect(await page(`/runs/${first}/in-second`)).toMatchObject({ status: 404, text: expect.stringContaining('unknown run &#39;in-second&#39;') });
    // An array is one namespace's: the other shows none of it; unknown in both, it is refused.
    const ofArray = await page(`/runs?array=${array[0]!.array!}`);
    expect(ofArray.status).toBe(200);
    expect(ofArray.text).toContain(`data-testid="run-row-${array[0]!.id}"`);
    expect(ofArray.text).toContain(`data-testid="run-count-${first}">0 runs`);
    expect(await page('/runs?array=nosucharray')).toMatchObject({ status: 400, text: expect.stringContaining('unknown array &#39;nosucharray&#39;') });
    const unknown = await page('/runs?queue=nope');
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain(`unknown namespace &#39;nope&#39;: this dashboard shows ${first}, ${second}`);
  });
});
