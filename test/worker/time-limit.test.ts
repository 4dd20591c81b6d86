/**
 * Time limits through real processes: a worker kills a run past its limit
 * (process group, SIGKILL after its grace) and the run ends `timeout`; the
 * time signal comes ahead of the limit, and a run that ends on it ends by
 * its exit code; a worker's --default-time-limit and --max-time-limit.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';
import type { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';

async function stage(queue: string, args: string[]): Promise<string> {
  const result = await fitq(['stage', ...args], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

async function ended(client: FitqClient, runId: string, timeoutMs = 30_000): Promise<RunRecord> {
  return waitFor(`run ${runId} to end`, async () => {
    const run = await client.getRun(runId);
    return !['staged', 'running'].includes(run.status) && run;
  }, timeoutMs);
}

async function output(client: FitqClient, runId: string): Promise<string[]> {
  return (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
}

describe('time limits', () => {
  it('kills a run past its limit: it ends timeout, with the limit in its reason, BullMQ failed and `fitq runs --status timeout` listing it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(queue, ['--time-limit', '1', '--', 'sleep', '30']);
    expect(await client.getRun(id)).toMatchObject({ status: 'staged', timeLimit: 1000 });
    spawnCliWorker(queue, ['-r', 'cpu=1', '--kill-grace', '1']);
    const running = await waitFor('the run to start', async () => {
      const run = await client.getRun(id);
      return run.status === 'running' && run;
    });
    expect(running.deadline).toBe(running.startedAt! + 1000);
    const run = await ended(client, id);
    expect((await fitq(['runs', 'show', id], { queue })).stdout).toMatch(/^limit: {5}1s$/m);
    expect(run).toMatchObject({ status: 'timeout', signal: 'SIGTERM', reason: 'time limit of 1s reached (killed by signal SIGTERM)' });
    expect(run.endedAt! - run.startedAt!).toBeGreaterThanOrEqual(1000);
    expect(run.deadline).toBeUndefined();
    expect(await client.redis.hget(client.keys.run(id), 'failedReason')).toBe('timeout: time limit of 1s reached (killed by signal SIGTERM)');
    const listed = await fitq(['runs', '--status', 'timeout', '--columns', 'id,status'], { queue });
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('timeout');
  });

  it('kills a run that ignores the signal after the grace', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(queue, ['--time-limit', '1', '--shell', '--', 'trap "echo ignored TERM" TERM; while :; do sleep 0.1; done']);
    spawnCliWorker(queue, ['-r', 'cpu=1', '--kill-grace', '1']);
    const run = await ended(client, id);
    expect(run).toMatchObject({ status: 'timeout', signal: 'SIGKILL', reason: 'time limit of 1s reached (killed by signal SIGKILL)' });
    expect(run.endedAt! - run.startedAt!).toBeGreaterThanOrEqual(2000);
    expect(await output(client, id)).toContain('ignored TERM');
  });

  it('sends --time-signal ahead of the limit: a run that traps it and goes on still times out; one that ends on it ends by its exit code', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const script = (onSignal: string) => `trap "${onSignal}" USR1; while :; do sleep 0.1; done`;
    const goesOn = await stage(queue, ['--time-limit', '3', '--time-signal', 'USR1@2s', '--shell', '--', script('echo got USR1')]);
    const endsOnIt = await stage(queue, ['--time-limit', '3', '--time-signal', 'SIGUSR1@2', '--shell', '--', script('echo saving; exit 0')]);
    expect((await client.getRun(goesOn)).timeSignal).toBe('SIGUSR1@2s');
    spawnCliWorker(queue, ['-r', 'cpu=2', '--kill-grace', '1']);
    const stopped = await ended(client, endsOnIt);
    // Completed, not timeout: it ended on the signal, before the limit.
    expect(stopped).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(await output(client, endsOnIt)).toContain('saving');
    const timedOut = await ended(client, goesOn);
    expect(timedOut).toMatchObject({ status: 'timeout', reason: 'time limit of 3s reached (killed by signal SIGTERM)' });
    expect(await output(client, goesOn)).toContain('got USR1');
  });

  it("a worker's --max-time-limit: longer runs stay staged and say why; runs without a limit get the maximum", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const over = await stage(queue, ['--time-limit', '1h', '--', 'true']);
    const none = await stage(queue, ['--', 'sleep', '30']);
    spawnCliWorker(queue, ['-r', 'cpu=2', '--kill-grace', '1', '--max-time-limit', '2s']);
    expect(await ended(client, none)).toMatchObject({ status: 'timeout', reason: 'time limit of 2s reached (killed by signal SIGTERM)', timeLimit: 2000 });
    expect((await client.listWorkers())[0]).toMatchObject({ maxTimeLimit: 2000 });
    expect((await client.listWorkers())[0]?.defaultTimeLimit).toBeUndefined();
    const runs = await client.listRuns();
    expect(runs.find((run) => run.id === over)).toMatchObject({
      status: 'staged',
      reason: "its time limit of 1h is above every live worker's --max-time-limit (the longest is 2s)",
    });
  });

  it("a worker's --default-time-limit applies to runs staged without one, not to runs with their own", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const none = await stage(queue, ['--', 'sleep', '30']);
    // It runs until the test has looked at it.
    const go = join(mkdtempSync(join(tmpdir(), 'fitq-limit-')), 'go');
    const own = await stage(queue, ['--time-limit', '1h', '--time-signal', 'USR2@10m', '--shell', '--', `while [ ! -e '${go}' ]; do sleep 0.05; done`]);
    spawnCliWorker(queue, ['-r', 'cpu=2', '--kill-grace', '1', '--default-time-limit', '00:00:01', '--max-time-limit', '2h']);
    await waitFor('the run to start', async () => (await client.getRun(own)).status === 'running');
    expect((await fitq(['runs', 'show', own], { queue })).stdout).toMatch(/^limit: {5}1h \(SIGUSR2@10m\), deadline (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d$/m); // local time, with the date when it falls on another day
    writeFileSync(go, '');
    expect(await ended(client, none)).toMatchObject({ status: 'timeout', reason: 'time limit of 1s reached (killed by signal SIGTERM)', timeLimit: 1000 });
    expect(await ended(client, own)).toMatchObject({ status: 'completed', timeLimit: 3_600_000 });
  });

  it.each([
    [['stage', '--time-limit', '25:61:00', '--', 'true'], "expected --time-limit to be a time limit such as 2h30m, 90s, 02:30:00, 1-12:00:00 or 5400 (seconds) (a field past its clock range), got '25:61:00'"],
    [['stage', '--time-signal', 'USR1@1m', '--', 'true'], "--time-signal 'SIGUSR1@1m' needs a --time-limit"],
    [['worker', '-r', 'cpu=1', '--default-time-limit', '2h', '--max-time-limit', '1h'], "--default-time-limit '2h' is above --max-time-limit '1h'"],
  ])('fitq %j is refused in one line, exit 2', async (args, message) => {
    const queue = newQueue();
    const result = await fitq(args, { queue });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
    const client = await connectClient(queue);
    expect(await client.listRuns()).toEqual([]);
  });
});
