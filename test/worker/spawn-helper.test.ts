/**
 * The spawn helper (src/worker/spawner): a worker's runs are children of
 * its small helper process, never of the worker itself; their output, their
 * cancel and their exit come through it. When the helper dies (killed here
 * with SIGKILL), the worker kills what it had running, records those runs
 * as stopped by their worker (re-staged per their retries, else lost, with
 * the reason), and starts a new helper for the next run. Real processes, a
 * real worker and a real redis-server.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { LogEntry } from '../../src/model/logs.js';
import { spawnHelperPids } from '../../src/worker/spawner/spawner.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { isAlive } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

/** The lines of a run's stdout and stderr stored so far. */
async function lines(client: FitqClient, id: string): Promise<{ stream: string; line: string }[]> {
  return (await client.readLog(id)).flatMap((entry: LogEntry) => (entry.kind === 'line' ? [{ stream: entry.stream, line: entry.line }] : []));
}

/** The run's first stdout line once it is stored, as a number (the scripts below print a pid). */
async function printedPid(client: FitqClient, id: string, prefix: string): Promise<number> {
  return waitFor(`run ${id} to print its ${prefix}`, async () => {
    const line = (await lines(client, id)).find((entry) => entry.line.startsWith(prefix));
    return line && Number(line.line.slice(prefix.length));
  });
}

describe('the spawn helper', () => {
  it('is the parent of every run, not the worker; a run output and cancel go through it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { killGraceMs: 1000 });
    const script = 'echo "parent=$PPID"; echo "pid=$$"; echo to-stderr >&2; exec sleep 300';
    const id = (await client.stage({ command: ['sh', '-c', script] })).runs[0]!.id;
    const parent = await printedPid(client, id, 'parent=');
    const pid = await printedPid(client, id, 'pid=');
    expect(spawnHelperPids()).toContain(parent);
    expect(parent).not.toBe(process.pid);
    expect(isAlive(pid)).toBe(true);

    const canceled = await client.cancelRun(id, { wait: true });
    expect(canceled.status).toBe('canceled');
    expect(canceled.reason).toBe('canceled (killed by signal SIGTERM)');
    expect(isAlive(pid)).toBe(false);
    expect(await lines(client, id)).toContainEqual({ stream: 'stderr', line: 'to-stderr' });
  });

  it('dies: its running runs are killed and end stopped by their worker, with why; a new helper runs the next run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { killGraceMs: 1000 });
    const script = 'echo "parent=$PPID"; echo "pid=$$"; exec sleep 300';
    const [lost, retried] = (
      await client.stage([{ command: ['sh', '-c', script] }, { command: ['sh', '-c', script], retries: 1 }])
    ).runs.map((run) => run.id);
    const lostPid = await printedPid(client, lost!, 'pid=');
    const retriedPid = await printedPid(client, retried!, 'pid=');
    const lostHelper = await printedPid(client, lost!, 'parent=');
    const retriedHelper = await printedPid(client, retried!, 'parent=');
    const killed = [...new Set([lostHelper, retriedHelper])];
    for (const helper of killed) process.kill(helper, 'SIGKILL');

    const why = (helper: number) => new RegExp(`^its worker ${worker.name} lost its spawn helper \\(pid ${helper}, killed by signal SIGKILL\\)`);
    const ended = await client.waitForEnd(lost!);
    expect(ended.status).toBe('lost');
    expect(ended.reason).toMatch(why(lostHelper));
    expect(isAlive(lostPid)).toBe(false);
    // With a retry left, it is staged again and started by a new helper.
    const again = await waitFor('the retried run to start again', async () => {
      const run = await client.getRun(retried!);
      return run.status === 'running' && run.attempts?.length === 1 && run;
    });
    expect(again.restagedReason).toMatch(why(retriedHelper));
    expect(isAlive(retriedPid)).toBe(false);
    // (Its log starts again with its new attempt.)
    const newHelper = await waitFor('the retried run to print its new parent', async () => {
      const parents = (await lines(client, retried!)).filter((entry) => entry.line.startsWith('parent=')).map((entry) => Number(entry.line.slice(7)));
      return parents.find((parent) => !killed.includes(parent));
    });
    expect(killed).not.toContain(newHelper);
    expect(spawnHelperPids()).toContain(newHelper);
    await client.cancelRun(retried!, { wait: true });

    const next = (await client.stage({ command: ['sh', '-c', 'echo "parent=$PPID"'] })).runs[0]!.id;
    expect((await client.waitForEnd(next)).status).toBe('completed');
    const parent = await printedPid(client, next, 'parent=');
    expect(spawnHelperPids()).toContain(parent);
    expect(killed).not.toContain(parent);
  });
});
