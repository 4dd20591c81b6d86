/**
 * A run whose process exited on its own just before its worker terminated
 * it (its end still on its way from the spawn helper) is not counted as
 * terminated: its own outcome is recorded, not a stop. Real processes,
 * through the worker's own spawn path.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startRunProcess, type RunProcess } from '../../src/worker/child.js';
import { processExited } from '../../src/model/liveness.js';

const started: RunProcess[] = [];
afterAll(async () => {
  for (const run of started) run.kill();
});

async function start(script: string): Promise<RunProcess> {
  const run = await startRunProcess({
    command: ['sh', '-c', script],
    shell: false,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    killGraceMs: 5000,
    onLine: () => {},
  });
  started.push(run);
  return run;
}

describe('terminating a run', () => {
  it('does not count a run whose process already exited as terminated', async () => {
    const run = await start('exit 3');
    const group = (await run.group)!;
    // Synchronously, so the helper's word of the exit cannot be handled before terminate: the kernel's is.
    const deadline = Date.now() + 10_000;
    while (!processExited(group) && Date.now() < deadline);
    expect(processExited(group)).toBe(true);
    run.terminate(5000);
    expect(run.terminated).toBe(false);
    expect(await run.outcome).toMatchObject({ status: 'failed', exitCode: 3 });
  });

  it('counts a run still running as terminated', async () => {
    const run = await start('sleep 30');
    const group = (await run.group)!;
    expect(processExited(group)).toBe(false);
    run.terminate(5000);
    expect(run.terminated).toBe(true);
    expect(await run.outcome).toMatchObject({ status: 'failed', signal: 'SIGTERM' });
  });
});
