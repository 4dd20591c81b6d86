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
import { newQueue } from '../support/fitq.js';

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
    expect(await held.locator('.gpu-memory').innerText()).toBe("21.3 of 40.0 GiB used (21.3 GiB not fitq's), 0 % busy");
    expect(await page.locator('[data-testid="gpu-box-1"]').getAttribute('data-probe')).toBe('ok');

    box.change((state) => {
      state.processes = [];
      state.gpus[0]!.memoryUsedMiB = 412;
    });
    // Redrawn without a reload: the probe's change is an event the page hears.
    await page.locator('[data-testid="gpu-box-0"][data-probe="ok"]').waitFor();
    expect(await page.locator('[data-testid="gpu-why-box-0"]').count()).toBe(0);
    expect(opened.consoleErrors).toEqual([]);
    expect(opened.blocked).toEqual([]);
  });
});
