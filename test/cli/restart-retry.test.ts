/**
 * Restart and retry through the real CLI and real workers: --retry-on-failure
 * really re-runs a failing script N times (after its backoff, out of the fit
 * index meanwhile) and then ends failed, every attempt listed; only the exit
 * codes asked for are retried; `fitq restart` stages ended runs again with
 * their history, refusing runs that have not ended.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

async function stageOne(queue: string, args: string[]): Promise<string> {
  const result = await fitq(['stage', ...args], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('fitq stage --retry-on-failure', () => {
  it('re-runs a failing script N times after its backoff, then it ends failed; every attempt is listed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const counter = join(mkdtempSync(join(tmpdir(), 'fitq-retry-')), 'count');
    const id = await stageOne(queue, [
      '--retry-on-failure', '2', '--backoff', '300ms', '--', 'sh', '-c', 'echo x >> "$0"; echo attempt; exit 7', counter,
    ]);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'retrier']);
    const run = await client.waitForEnd(id);
    expect(run).toMatchObject({ status: 'failed', exitCode: 7, reason: 'exit code 7', failures: 2 });
    expect(readFileSync(counter, 'utf8')).toBe('x\nx\nx\n');
    // (The worker's log lines may reach the test after Redis records the end.)
    const startedLines = () => worker.messages().filter((message) => message.startsWith(`Run ${id} started`));
    await waitFor('three starts in the log', () => startedLines().length >= 3);
    expect(startedLines()).toHaveLength(3);
    const shown = await client.getRun(id);
    expect(shown.attempts?.map(({ attempt, status, exitCode, reason, worker: by }) => ({ attempt, status, exitCode, reason, by }))).toEqual([
      { attempt: 1, status: 'failed', exitCode: 7, reason: 'exit code 7', by: 'retrier' },
      { attempt: 2, status: 'failed', exitCode: 7, reason: 'exit code 7', by: 'retrier' },
    ]);
    // Each retry waited out its backoff.
    expect(shown.startedAt! - shown.attempts![1]!.endedAt!).toBeGreaterThanOrEqual(300);
    const text = await fitq(['runs', 'show', id], { queue });
    expect(text.stdout).toMatch(/^retry: +on failure: 2 of 2 used, backoff 300ms$/m);
    expect(text.stdout).toMatch(/^attempts:\n {2}#1 failed \(exit code 7\), on retrier, started .*\n {2}#2 failed \(exit code 7\), on retrier/m);
    expect((await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['attempt', 'attempt', 'attempt']);
  });

  it('retries only the exit codes asked for; a run that completes is never retried', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const other = await stageOne(queue, ['--retry-on-failure', '3', '--retry-on-exit-codes', '3,137', '--', 'sh', '-c', 'exit 4']);
    const fine = await stageOne(queue, ['--retry-on-failure', '3', '--', 'true']);
    spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'picky']);
    expect(await client.waitForEnd(other)).toMatchObject({ status: 'failed', exitCode: 4 });
    expect((await client.getRun(other)).attempts).toBeUndefined();
    expect(await client.waitForEnd(fine)).toMatchObject({ status: 'completed' });
    for (const [args, message] of [
      [['--retry-on-failure', '-1'], "expected --retry-on-failure to be an integer from 0 to 100, got '-1'"],
      [['--backoff', '1s'], '--backoff goes with --retry-on-failure N'],
      [['--retry-on-failure', '1', '--backoff', '1s,linear'], "expected --backoff to be a duration, optionally followed by ,exp (30s,exp), got '1s,linear'"],
      [['--retry-on-failure', '1', '--retry-on-exit-codes', '3,x'], "got 'x'"],
    ] as const) {
      const result = await fitq(['stage', ...args, '--', 'true'], { queue });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });
});

describe('fitq restart', () => {
  it('stages ended runs again, same id, a fresh attempt, history kept; refuses runs that have not ended', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const flaky = await stageOne(queue, ['--label', 'batch=r', '--', 'sh', '-c', 'exit 1']);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'restarter']);
    await client.waitForEnd(flaky);
    const staged = await stageOne(queue, ['-r', 'nowhere=1', '--', 'true']);
    // Every run is checked first: one that has not ended refuses the lot (exit 2).
    const refused = await fitq(['restart', staged, flaky], { queue });
    expect(refused).toEqual({ exitCode: 2, stdout: '', stderr: `Error: run '${staged}' is staged: only an ended run can be restarted` });
    expect((await client.getRun(flaky)).status).toBe('failed');
    expect((await fitq(['restart', flaky], { queue })).stdout).toBe(`Run ${flaky} restarted: staged`);
    await worker.waitForMessage(new RegExp(`^Run ${flaky} failed`));
    await client.waitForEnd(flaky);
    const again = await fitq(['restart', '--status', 'failed', '--label', 'batch=r', '--json'], { queue });
    expect(JSON.parse(again.stdout)).toEqual([{ id: flaky, outcome: 'restarted', where: 'staged', message: `Run ${flaky} restarted: staged` }]);
    const run = await client.waitForEnd(flaky);
    expect(run.status).toBe('failed');
    const shown = await client.getRun(flaky);
    expect(shown.restarted).toBe(2);
    expect(shown.attempts?.map((attempt) => [attempt.attempt, attempt.status, attempt.worker])).toEqual([
      [1, 'failed', 'restarter'],
      [2, 'failed', 'restarter'],
    ]);
    const startedLines = () => worker.messages().filter((message) => message.startsWith(`Run ${flaky} started`));
    await waitFor('three starts in the log', () => startedLines().length >= 3);
    expect(startedLines()).toHaveLength(3);
  });
});
