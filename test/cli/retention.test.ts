/**
 * `fitq retention` and `fitq runs clean` through the real CLI: settings shown
 * with their defaults and changed, runs beyond them removed with their
 * output, bad values refused in one line (exit 2), and never a staged or
 * running run removed.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { connectClient, fitq, newQueue, startTestWorker, type CliResult } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** Exit 2, one `Error: ...` line, nothing on stdout. */
function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([`Error: ${message}`]);
  expect(result.stdout).toBe('');
}

/** Moves a run's end into the past, as if it had ended `agoMs` ago. */
async function endedAgo(client: FitqClient, runId: string, agoMs: number): Promise<void> {
  const finishedOn = Date.now() - agoMs;
  const state = (await client.getRun(runId)).status === 'completed' ? 'completed' : 'failed';
  await client.redis.zadd(client.keys.queue.key(state), finishedOn, runId);
  await client.redis.hset(client.keys.run(runId), 'finishedOn', finishedOn);
}

/** Stages runs of one command and runs them to their end with a --run-once worker; returns their ids. */
async function runThrough(queue: string, command: string[], repeat: number): Promise<string[]> {
  const client = await connectClient(queue);
  const ids = (await client.stage({ command, repeat })).runs.map((run) => run.id);
  const { worker } = await startTestWorker(queue, { runOnce: true, concurrency: 1 });
  await worker.done;
  return ids;
}

async function remaining(client: FitqClient, ids: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  for (const id of ids) if ((await client.redis.exists(client.keys.run(id))) === 1) left.push(id);
  return left;
}

describe('fitq retention', () => {
  it('shows the settings and their defaults, changes them, removes the runs beyond them at once, and resets', async () => {
    const queue = newQueue();
    expect(expectOk(await fitq(['retention'], { queue }))).toBe(
      ['keep-completed: 10000 (default)', 'keep-failed:    10000 (default)', 'max-age:        7d (default)'].join('\n'),
    );
    const ids = await runThrough(queue, ['true'], 4);
    const changed = await fitq(['retention', '--keep-completed', '1', '--max-age', '36h'], { queue });
    expect(expectOk(changed)).toBe(
      [
        'keep-completed: 1 (default 10000)',
        'keep-failed:    10000 (default)',
        'max-age:        1d12h (default 7d)',
        'Removed 3 runs beyond it.',
      ].join('\n'),
    );
    const client = await connectClient(queue);
    expect(await remaining(client, ids)).toEqual(ids.slice(3));
    expectRefused(await fitq(['logs', ids[0]!], { queue }), `unknown run '${ids[0]}'`);
    expect(JSON.parse(expectOk(await fitq(['retention', '--keep-failed', 'off', '--json'], { queue })))).toEqual({
      keepCompleted: 1,
      keepFailed: null,
      keepAgeMs: 36 * 3_600_000,
      defaults: { keepCompleted: 10_000, keepFailed: 10_000, keepAgeMs: 7 * 24 * 3_600_000 },
      stored: ['keepCompleted', 'keepFailed', 'keepAgeMs'],
      removed: 0,
    });
    expect(expectOk(await fitq(['retention', '--max-age', '0'], { queue }))).toMatch(/^max-age: +off \(default 7d\)$/m);
    expect(await client.redis.hgetall(client.keys.settings)).toEqual({ keepCompleted: '1', keepFailed: 'off', keepAgeMs: 'off' });

    // Each run's end applies them: one completed run is kept.
    const next = await runThrough(queue, ['true'], 2);
    expect(await remaining(client, [...ids, ...next])).toEqual([next[1]]);

    expect(expectOk(await fitq(['retention', '--reset'], { queue }))).toBe(
      [
        'keep-completed: 10000 (default)',
        'keep-failed:    10000 (default)',
        'max-age:        7d (default)',
        'Removed 0 runs beyond it.',
      ].join('\n'),
    );
    expect(await client.redis.exists(client.keys.settings)).toBe(0);
  });

  it('refuses bad values in one line, quoting them, and changes nothing', async () => {
    const queue = newQueue();
    const cases: [string[], string][] = [
      [['--keep-completed', '-1'], "expected --keep-completed to be a number of runs (0 or more) or off, got '-1'"],
      [['--keep-failed', '1.5'], "expected --keep-failed to be a number of runs (0 or more) or off, got '1.5'"],
      [['--keep-failed', 'lots'], "expected --keep-failed to be a number of runs (0 or more) or off, got 'lots'"],
      [['--max-age', '7'], "expected --max-age to be a duration such as 7d, 12h, 30m or 1h30m (a number needs a unit: ms, s, m, h, d or w), got '7'"],
      [['--max-age', 'forever'], "expected --max-age to be a duration such as 7d, 12h, 30m or 1h30m, got 'forever'"],
      [['--keep-completed', '5', '--max-age', '-2d'], "expected --max-age to be a duration such as 7d, 12h, 30m or 1h30m, got '-2d'"],
    ];
    for (const [args, message] of cases) expectRefused(await fitq(['retention', ...args], { queue }), message);
    const client = await connectClient(queue);
    expect(await client.redis.exists(client.keys.settings)).toBe(0);
  });

  it('keeping none: fitq cancel and logs -f still read how a run ended; it goes as the next one ends', async () => {
    const queue = newQueue();
    expectOk(await fitq(['retention', '--keep-failed', '0'], { queue }));
    const client = await connectClient(queue);
    const staged = (await client.stage({ command: ['true'], resources: 'nothing=1' })).runs[0]!.id;
    expect(expectOk(await fitq(['cancel', staged], { queue }))).toBe(`Run ${staged} canceled`);
    const running = (await client.stage({ command: ['sleep', '30'] })).runs[0]!.id;
    await startTestWorker(queue, { killGraceMs: 1000 });
    await waitFor('the run to start', async () => (await client.getRun(running)).status === 'running');
    const following = fitq(['logs', '-f', running], { queue });
    expect(expectOk(await fitq(['cancel', running], { queue }))).toBe(`Run ${running} canceled`);
    const followed = await following;
    expect(followed.exitCode, followed.stderr).toBe(1);
    expect(followed.stderr.trim()).toMatch(new RegExp(`^run ${running} canceled`));
    expect(await remaining(client, [staged, running])).toEqual([running]);
  });
});

describe('fitq runs clean', () => {
  it('removes ended runs by status, age and keep, with their output; never staged or running ones', async () => {
    const queue = newQueue();
    const completed = await runThrough(queue, ['true'], 3);
    const failed = await runThrough(queue, ['false'], 2);
    const client = await connectClient(queue);
    const canceled = (await client.stage({ command: ['true'], resources: 'nothing=1', repeat: 3 })).runs.map((run) => run.id);
    await client.cancelRuns(canceled);
    const staged = (await client.stage({ command: ['true'], resources: 'nothing=1' })).runs[0]!.id;
    const running = (await client.stage({ command: ['sleep', '30'], resources: 'busy=1' })).runs[0]!.id;
    await startTestWorker(queue, { resources: 'busy=1', killGraceMs: 1000 });
    await waitFor('the run to start', async () => (await client.getRun(running)).status === 'running');
    for (const [i, id] of completed.entries()) await endedAgo(client, id, (10 - i) * 86_400_000); // 10, 9, 8 days ago
    for (const [i, id] of canceled.entries()) await endedAgo(client, id, (3 - i) * 3_600_000); // 3, 2, 1 h ago

    expect(expectOk(await fitq(['runs', 'clean', '--status', 'completed', '--older-than', '8d12h'], { queue }))).toBe('Removed 2 runs.');
    expect(await remaining(client, completed)).toEqual(completed.slice(2));
    expect(expectOk(await fitq(['runs', 'clean', '--status', 'canceled,failed', '--keep', '3'], { queue }))).toBe('Removed 2 runs.');
    expect(await remaining(client, [...failed, ...canceled])).toEqual([...failed, canceled[2]]);
    expect(expectOk(await fitq(['runs', 'clean', '--status', 'lost', '--status', 'rejected'], { queue }))).toBe('Removed 0 runs.');
    expect(expectOk(await fitq(['runs', 'clean', '--older-than', '30m'], { queue }))).toBe('Removed 2 runs.');
    expect(await remaining(client, [...completed, ...failed, ...canceled])).toEqual(failed);
    expect(await client.redis.exists(client.keys.runLog(canceled[2]!))).toBe(0);
    expect(expectOk(await fitq(['runs', 'clean'], { queue }))).toBe('Removed 2 runs.');
    expect(await remaining(client, [...completed, ...failed, ...canceled, staged, running])).toEqual([staged, running]);
    expect((await client.getRun(running)).status).toBe('running');
  });

  it('--dry-run lists the runs it would remove (--json: their records) and removes nothing; then they go', async () => {
    const queue = newQueue();
    const completed = await runThrough(queue, ['true'], 3);
    const client = await connectClient(queue);
    const [canceled] = (await client.stage({ command: ['true'], resources: 'nothing=1' })).runs.map((run) => run.id);
    await client.cancelRuns([canceled!]);
    for (const [i, id] of completed.entries()) await endedAgo(client, id, (10 - i) * 86_400_000); // 10, 9, 8 days ago
    const args = ['runs', 'clean', '--older-than', '8d12h'];

    const dry = expectOk(await fitq([...args, '--dry-run'], { queue })).split('\n');
    expect(dry[0]).toBe('Would remove 2 runs:');
    expect(dry.slice(2).map((line) => line.split(/\s+/).slice(0, 2))).toEqual(completed.slice(0, 2).map((id) => [id, 'completed']));
    const json = JSON.parse(expectOk(await fitq([...args, '--dry-run', '--json'], { queue }))) as { id: string; status: string }[];
    expect(json.map((run) => [run.id, run.status])).toEqual(completed.slice(0, 2).map((id) => [id, 'completed']));
    expect(expectOk(await fitq(['runs', 'clean', '--status', 'lost', '--dry-run'], { queue }))).toBe('Would remove 0 runs.');
    expect(await remaining(client, [...completed, canceled!])).toEqual([...completed, canceled]);

    expect(expectOk(await fitq([...args, '--json'], { queue }))).toBe(JSON.stringify(completed.slice(0, 2)));
    expect(await remaining(client, [...completed, canceled!])).toEqual([completed[2], canceled]);
  });

  it('refuses statuses that are not ended ones and bad durations or counts, in one line', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [id] = (await client.stage({ command: ['true'], resources: 'nothing=1' })).runs.map((run) => run.id);
    await client.cancelRuns([id!]);
    const statuses = 'completed, failed, canceled, lost, rejected, timeout';
    const cases: [string[], string][] = [
      [['--status', 'running'], `only ended runs are cleaned: expected a status from ${statuses}, got 'running'`],
      [['--status', 'completed,staged'], `only ended runs are cleaned: expected a status from ${statuses}, got 'staged'`],
      [['--status', 'done'], `only ended runs are cleaned: expected a status from ${statuses}, got 'done'`],
      [['--older-than', '1 week'], "expected --older-than to be a duration such as 7d, 12h, 30m or 1h30m, got '1 week'"],
      [['--keep', '-3'], "expected --keep to be an integer from 0 to 9007199254740991, got '-3'"],
    ];
    for (const [args, message] of cases) expectRefused(await fitq(['runs', 'clean', ...args], { queue }), message);
    expect((await client.getRun(id!)).status).toBe('canceled');
  });
});
