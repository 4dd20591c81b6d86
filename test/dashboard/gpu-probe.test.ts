/**
 * The dashboard's device map with a worker that probes its GPUs (the
 * stand-in nvidia-smi, a real CLI worker, a real Chromium): a device a
 * process fitq did not start holds is drawn as such, with who holds it and
 * its memory, and redrawn live once the process is gone.
 */
import { describe, expect, it } from 'vitest';
import { openBrowserPage, startDashboard } from '../support/browser.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';
import { connectClient, FIXTURES, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('the device map of a worker that probes its GPUs', () => {
  it('shows a device held by a process fitq did not start, its memory, and the device freed, live', async () => {
    const box = fakeGpuBox({
      gpus: [{ ...a100('GPU-a'), memoryUsedMiB: 21804 }, a100('GPU-b')],
      processes: [{ gpu: 0, pid: 4242, usedMiB: 21800, name: '/usr/bin/python3' }],
    });
    const queue = newQueue();
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'box'], undefined, box.env);
    await worker.waitForMessage(/^GPU 0 is busy/);
    const dashboard = await startDashboard(queue);
    const opened = await openBrowserPage(dashboard.origin);
    const { page } = opened;
    await page.goto(`${dashboard.origin}/workers`);
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    const held = page.locator('[data-testid="gpu-box-0"][data-probe="busy"]');
    await held.waitFor();
    expect(await page.locator('[data-testid="gpu-why-box-0"]').innerText()).toBe(
      'foreign process: used by a process fitq did not start (pid 4242, python3, 21.3 GiB)',
    );
    expect(await held.locator('.gpu-memory').innerText()).toBe("21.3 of 40.0 GiB used (not fitq's 21.3), 0 % busy");
    expect(await page.locator('[data-testid="gpu-box-1"]').getAttribute('data-probe')).toBe('ok');

    box.change((state) => {
      state.processes = [];
      state.gpus[0]!.memoryUsedMiB = 412;
    });
    // Redrawn without a reload: the probe's change is an event the page hears.
    await page.locator('[data-testid="gpu-box-0"][data-probe="ok"]').waitFor();
    expect(await page.locator('[data-testid="gpu-why-box-0"]').count()).toBe(0);

    // A run of fitq's on the device: its memory is told apart from what others use.
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-gate-')), 'done');
    const { runs: [user] } = await client.stage({ command: [`${FIXTURES}gpu-user.mjs`, gate], resources: 'gpu=1' });
    const device = await waitFor('the run to get its device', async () => (await client.getRun(user!.id)).devices?.[0]);
    await waitFor("the probe's reading of the run's memory", async () => {
      const reading = JSON.parse((await client.redis.hget(client.keys.worker('box').gpus, String(device))) ?? '{}') as { runsMiB?: Record<string, number> };
      return reading.runsMiB?.[user!.id] === 1024;
    });
    await page.goto(`${dashboard.origin}/workers`);
    await page.locator(`[data-testid="gpu-box-${device}"] .gpu-memory`, { hasText: /^1\.4 of 40\.0 GiB used \(fitq's runs 1\.0\), 0 % busy$/ }).waitFor();
    writeFileSync(gate, '');
    expect((await client.waitForEnd(user!.id)).status).toBe('completed');
    expect(opened.consoleErrors).toEqual([]);
    expect(opened.blocked).toEqual([]);
  });
});
