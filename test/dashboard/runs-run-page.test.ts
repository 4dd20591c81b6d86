/**
 * A run's page in the real `fitq dashboard`, in real headless Chromium: its
 * record without env values, its dependencies and dependents with their
 * states, its attempts after a restart, and the tail of its output
 * following a running run live until it ends (no reload); hostile output
 * renders as text; no console errors; screenshots at both sizes; a run
 * being preempted says so, on its page and in the runs list.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBrowserPage, saveScreenshots, startDashboard } from '../support/browser.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('dashboard run page', () => {
  it('follows the output of a running run live, and shows its record (no env values), dependencies and end', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-gate-')), 'go');
    await startTestWorker(queue, { name: 'log-box', resources: 'slot=2' });
    // Prints a line, waits for the test's gate, prints more (one of them hostile, one very long), and ends.
    const script = [
      'echo first line',
      `while [ ! -e '${gate}' ]; do sleep 0.05; done`,
      `echo '<script>window.__pwned=1</script><img src=x>'`,
      `printf '%s\\n' "${'z'.repeat(5000)}"`,
      'echo oops >&2',
      'echo last line',
    ].join('\n');
    const { runs: [run] } = await client.stage({
      command: [script],
      shell: true,
      resources: 'slot=1',
      runId: 'log-run',
      env: { API_TOKEN: 'hunter2-secret-value' },
      labels: { team: 'red' },
    });
    const { runs: [after] } = await client.stage({ command: ['true'], resources: 'slot=1', runId: 'after-log', after: [{ kind: 'ok', ids: ['log-run'] }] });
    await waitFor('the first line', async () => (await client.readLog(run!.id)).some((entry) => entry.kind === 'line' && entry.line === 'first line'));

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors, blocked } = await openBrowserPage(dashboard.origin);
    await page.goto(`${dashboard.origin}/runs/${queue}/${run!.id}`);
    const tail = page.getByTestId('log-tail');
    await page.locator('[data-testid="log-state"][data-state="following"]').waitFor();
    expect(await tail.textContent()).toBe('first line\n');
    expect(await page.getByTestId('run-status').textContent()).toBe('running');
    // Env by name only.
    expect(await page.getByTestId('field-env').textContent()).toBe('API_TOKEN');
    expect(await page.content()).not.toContain('hunter2');
    expect(await page.getByTestId('field-labels').textContent()).toBe('team=red');
    expect(await page.getByTestId('field-staged-by').textContent()).toBe(`${userInfo().username}@${hostname()}`);
    expect(await page.getByTestId('dependents-after-log').textContent()).toMatch(/after-log\s+staged/);
    expect(await page.getByTestId('attempt-1').textContent()).toMatch(/^#1 running, on log-box, started /);
    expect(await page.evaluate('window.__notReloaded = true')).toBe(true);
    const sizes = await saveScreenshots(page, 'run');
    expect(sizes['390x844']!.overflowX, 'page wider than a phone').toBeLessThanOrEqual(0);

    // The gate opens: the rest of the output comes in as the run prints it, then its end.
    writeFileSync(gate, '');
    await page.locator('[data-testid="log-state"][data-state="ended"]').waitFor();
    expect(await page.getByTestId('log-state').textContent()).toBe('run log-run completed');
    // stdout in order; stderr (read from its own pipe) in red.
    expect(await tail.locator('.stdout').allTextContents()).toEqual(['first line', '<script>window.__pwned=1</script><img src=x>', 'z'.repeat(5000), 'last line'].map((line) => `${line}\n`));
    expect(await tail.locator('.stderr').allTextContents()).toEqual(['oops\n']);
    expect(await tail.locator('script, img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned === undefined && window.__notReloaded === true')).toBe(true);
    // The record follows too: completed, and the run waiting for it has gone on.
    await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
    // What it used, as its worker measured it (the gate kept it running past its first reading).
    await page.locator('[data-testid="field-measured"]', { hasText: /^from \/proc every 1s \(what ends between two readings is missed\)$/ }).waitFor();
    expect(await page.getByTestId('field-memory').textContent()).toMatch(/^\d+\.\d[KMG] peak$/);
    expect(await page.getByTestId('field-cpu-time').textContent()).toMatch(/^\S+ \(user \S+, system \S+\), \d+\.\d\d CPUs on average$/);
    await client.waitForRuns([after!.id], { timeoutMs: 20_000 });
    await page.locator('[data-testid="dependents-after-log"]', { hasText: 'completed' }).waitFor();
    expect(consoleErrors).toEqual([]);
    expect(blocked).toEqual([]);

    // An ended run's page shows its output and end, and the dependency's state on the dependent's page.
    await page.goto(`${dashboard.origin}/runs/${queue}/${after!.id}`);
    expect(await page.getByTestId('dependency-0-log-run').textContent()).toMatch(/log-run\s+completed/);
    expect(await page.getByTestId('log-state').textContent()).toBe('run after-log completed');
    expect(await page.getByTestId('log-empty').textContent()).toBe('No output.');
  });

  it("lists a restarted run's attempts, and an unknown run is a 404 naming it", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'retry-box', resources: 'slot=1' });
    const { runs: [run] } = await client.stage({ command: ['sh', '-c', 'echo attempt; exit 3'], resources: 'slot=1', runId: 'twice' });
    await client.waitForRuns([run!.id], { timeoutMs: 20_000 }).catch(() => undefined);
    await client.restartRuns([run!.id]);
    await client.waitForRuns([run!.id], { timeoutMs: 20_000 }).catch(() => undefined);
    await worker.stop();

    const dashboard = await startDashboard(queue);
    const { page } = await openBrowserPage(dashboard.origin);
    await page.goto(`${dashboard.origin}/runs/${queue}/tw`); // a unique prefix
    expect(await page.getByTestId('attempts').locator('li').allTextContents()).toEqual([
      expect.stringMatching(/^#1 failed \(exit code 3\), on retry-box, started .*, ran /),
      expect.stringMatching(/^#2 failed \(exit code 3\), on retry-box, started .*, ran /),
    ]);
    expect(await page.getByTestId('field-restarted').textContent()).toBe('1');
    // Both attempts' output, with the line `fitq logs` prints between them.
    expect(await page.getByTestId('log-tail').textContent()).toBe("attempt\n--- fitq: re-staged (restarted (it was failed)); the next attempt's output follows ---\nattempt\n");

    const response = await page.goto(`${dashboard.origin}/runs/${queue}/nosuchrun`);
    expect(response?.status()).toBe(404);
    expect(await page.getByTestId('run-error').textContent()).toBe("unknown run 'nosuchrun'");
    expect((await fetch(`${dashboard.origin}/runs/${queue}/twice/log?after=%3Cscript%3E`)).status).toBe(400);
  });

  it('says a run is being preempted, for which run, with its signal and grace, as fitq runs does', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'gpu-box', resources: 'slot=1' });
    // Its process must run before it is preempted (else it is stopped at once: it has nothing to save).
    const started = join(mkdtempSync(join(tmpdir(), 'fitq-started-')), 'started');
    const forever = ['sh', '-c', `trap '' USR1; touch '${started}'; while :; do sleep 0.2; done`];
    await client.stage({ command: forever, resources: 'slot=1', runId: 'low-run', preemptSignal: 'USR1@1m' });
    await waitFor('its process', () => existsSync(started));
    await client.stage({ command: ['true'], resources: 'slot=1', runId: 'urgent-run', priority: 5 });
    await waitFor('the preemption', async () => (await client.getRun('low-run')).preempting?.for === 'urgent-run');

    const dashboard = await startDashboard(queue);
    const { page, consoleErrors } = await openBrowserPage(dashboard.origin);
    await page.goto(`${dashboard.origin}/runs/${queue}/low-run`);
    expect(await page.getByTestId('why-low-run').textContent()).toBe('preempting low-run for urgent-run (SIGUSR1, grace 1m)');
    await page.goto(`${dashboard.origin}/runs`);
    await page.getByTestId('live-status').and(page.locator('[data-state="live"]')).waitFor();
    expect(await page.getByTestId('why-low-run').textContent()).toBe('preempting low-run for urgent-run (SIGUSR1, grace 1m)');
    expect(consoleErrors).toEqual([]);
    await client.cancelRuns(['urgent-run', 'low-run'], { wait: true });
    await worker.stop();
  });
});
