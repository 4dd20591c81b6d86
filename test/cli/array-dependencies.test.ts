/**
 * Waiting for every run of an array or of a batch, as Slurm's
 * `afterok:<array job>`: `--after @` after `fitq stage --array/--param` (or
 * `--repeat`) and `--after ARRAY-ID` (or a prefix) mean all of its runs,
 * with Slurm's rules for arrays (afterok: all completed; afternotok: all
 * ended, one at least not completed; afterany: all ended); `@~N` is the
 * Nth staging before the last. `fitq wait @` and `fitq runs --tree` agree.
 * Through the real CLI and real workers.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

function stateEnv(): Record<string, string> {
  return { FITQ_STATE_DIR: mkdtempSync(join(tmpdir(), 'fitq-state-')) };
}

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** Stages; returns the run ids it printed and the array id it named, if any. */
async function stage(queue: string, args: string[], env: Record<string, string> = {}): Promise<{ ids: string[]; array: string }> {
  const result = await fitq(['stage', ...args], { queue, env });
  return { ids: expectOk(result).trim().split('\n'), array: /Staged array (\S+)/.exec(result.stderr)?.[1] ?? '' };
}

const byId = (runs: readonly RunRecord[]) => new Map(runs.map((run) => [run.id, run]));

describe('fitq stage --after an array', () => {
  it('--after @ after an array waits for every run of it, not the last one staged; fitq wait @~1 and runs --tree agree', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-array-deps-'));
    const client = await connectClient(queue);
    // Index 0 waits for a file; index 1 ends at once.
    const sweep = await stage(queue, ['-r', 'cpu=1', '--param', 't=0,1', '--array', '%2', '--cwd', dir, '--shell', '--', '[ {t} = 1 ] || while [ ! -e go ]; do sleep 0.02; done'], env);
    const [slow, fast] = sweep.ids;
    await stage(queue, ['--run-id', 'eval', '--after', '@', '--', 'echo', 'eval'], env);
    spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w1']);
    await waitFor('the fast run to complete and the slow one to run', async () => {
      const runs = byId(await client.listRuns({ array: sweep.array }));
      return runs.get(fast!)?.status === 'completed' && runs.get(slow!)?.status === 'running';
    });
    expect(await client.getRun('eval')).toMatchObject({ status: 'staged', reason: `waiting for array ${sweep.array} (1 of its 2 runs not ended)` });
    expect((await client.getRun('eval')).after).toEqual([{ kind: 'ok', ids: [], arrays: [sweep.array] }]);
    // @~1: the staging before the last one (the array), as a whole.
    const early = await fitq(['wait', '@~1', '--timeout', '1s'], { queue, env });
    expect(early.exitCode, early.stderr).toBe(75);
    expect(early.stderr).toContain(slow);

    writeFileSync(join(dir, 'go'), '');
    expect(await client.waitForEnd('eval')).toMatchObject({ status: 'completed' });
    const runs = byId(await client.listRuns());
    expect(runs.get('eval')!.startedAt).toBeGreaterThanOrEqual(runs.get(slow!)!.endedAt!);
    const waited = await fitq(['wait', '@~1'], { queue, env });
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stderr.split('\n').sort()).toEqual([`run ${fast} completed`, `run ${slow} completed`].sort());
    // The graph: eval under each run of the array.
    const tree = expectOk(await fitq(['runs', '--tree'], { queue })).split('\n');
    expect(tree).toContain(`└─ eval completed echo eval [after-ok]`);
    expect(tree).toContain(`└─ eval [after-ok] ^`);
    expect(expectOk(await fitq(['runs', 'show', slow!], { queue }))).toMatch(/^dependents: +eval$/m);
    expect(expectOk(await fitq(['runs', 'show', 'eval'], { queue }))).toMatch(new RegExp(`^after: +array ${sweep.array} \\(after-ok\\)$`, 'm'));
  });

  it('follows Slurm for arrays: afterok all completed, afternotok all ended and one not completed, afterany all ended; --after-any one completed', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const client = await connectClient(queue);
    // Index 0 completes, 1 exits 1, 2 exits 2: one run at a time, in order (each needs the worker's one cpu).
    const mixed = await stage(queue, ['-r', 'cpu=1', '--array', '0-2', '--', 'sh', '-c', 'exit {index}'], env);
    const clean = await stage(queue, ['-r', 'cpu=1', '--array', '0-1', '--', 'true'], env);
    const prefix = mixed.array.slice(0, 6);
    await stage(queue, ['--run-id', 'ok', '--after', prefix, '--', 'true'], env);
    await stage(queue, ['--run-id', 'notok', '--after-notok', mixed.array, '--', 'true'], env);
    await stage(queue, ['--run-id', 'end', '--after-end', mixed.array, '--', 'true'], env);
    await stage(queue, ['--run-id', 'any', '--after-any', mixed.array, '--', 'true'], env);
    await stage(queue, ['--run-id', 'cleanok', '--after-ok', clean.array, '--', 'true'], env);
    await stage(queue, ['--run-id', 'cleannotok', '--after-notok', clean.array, '--', 'true'], env);
    spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    await waitFor('every run to end', async () => (await client.listRuns()).every((run) => ['completed', 'failed', 'canceled'].includes(run.status)));
    const runs = byId(await client.listRuns());
    const [, second, third] = mixed.ids;
    expect(Object.fromEntries(['ok', 'notok', 'end', 'any', 'cleanok', 'cleannotok'].map((id) => [id, [runs.get(id)!.status, runs.get(id)!.reason]]))).toEqual({
      ok: ['canceled', `dependency array ${mixed.array}: its run ${second} failed (exit code 1)`],
      notok: ['completed', 'exit code 0'],
      end: ['completed', 'exit code 0'],
      any: ['completed', 'exit code 0'],
      cleanok: ['completed', 'exit code 0'],
      cleannotok: ['canceled', `dependency array ${clean.array}: all its 2 runs completed: --after-notok needs one of them not to`],
    });
    // Not before every run of the array ended, though one had failed long before.
    const lastEnd = runs.get(third!)!.endedAt!;
    for (const id of ['notok', 'end']) expect(runs.get(id)!.startedAt).toBeGreaterThanOrEqual(lastEnd);
    expect(runs.get('any')!.startedAt).toBeLessThan(lastEnd);
    expect(runs.get('ok')!.canceledFor).toBe(`array:${mixed.array}`);
  });

  it('a kept dependent waits again when the failed run is restarted; --cascade restarts one canceled for the array', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-array-deps-'));
    const client = await connectClient(queue);
    writeFileSync(join(dir, 'ok-0'), '');
    const array = await stage(queue, ['-r', 'cpu=1', '--array', '0-1', '--cwd', dir, '--', 'test', '-e', 'ok-{index}'], env);
    const [, failing] = array.ids;
    await stage(queue, ['--run-id', 'kept', '--after', array.array, '--keep-if-dependency-fails', '--', 'true'], env);
    await stage(queue, ['--run-id', 'gone', '--after', array.array, '--', 'true'], env);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    await waitFor('gone to be canceled', async () => (await client.getRun('gone')).status === 'canceled');
    const why = `dependency array ${array.array}: its run ${failing} failed (exit code 1)`;
    expect(await client.getRun('kept')).toMatchObject({ status: 'staged', reason: `can never start: ${why} (kept: --keep-if-dependency-fails)` });

    writeFileSync(join(dir, 'ok-1'), '');
    const restarted = await fitq(['restart', failing!, '--cascade'], { queue });
    expect(expectOk(restarted).split('\n')).toEqual([`Run ${failing} restarted: staged`, 'Run gone restarted (cascade): staged, waiting for its dependencies']);
    expect(await client.waitForEnd('kept')).toMatchObject({ status: 'completed' });
    expect(await client.waitForEnd('gone')).toMatchObject({ status: 'completed' });
    await worker.waitForMessage(`Run ${failing} completed`);
  });

  it('a staged run of the array removed counts as one that did not complete', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const client = await connectClient(queue);
    const array = await stage(queue, ['--hold', '--array', '0-1', '--', 'true'], env);
    await stage(queue, ['--run-id', 'after', '--after', '@', '--', 'true'], env);
    await stage(queue, ['--run-id', 'end', '--after-end', array.array, '--', 'true'], env);
    expectOk(await fitq(['runs', 'rm', array.ids[0]!], { queue }));
    expect(await client.getRun('after')).toMatchObject({ status: 'canceled', reason: `dependency array ${array.array}: its run ${array.ids[0]} was removed` });
    expect(await client.getRun('end')).toMatchObject({ status: 'staged', reason: `waiting for array ${array.array} (1 of its 2 runs not ended)` });
    expectOk(await fitq(['cancel', array.ids[1]!], { queue }));
    expect((await client.getRun('end')).status).toBe('staged');
    expect((await client.getRun('end')).waitingForDependencies).toBeUndefined();
  });
});

describe('fitq stage --after @ after a batch', () => {
  it('@ is every run the last fitq stage staged (--repeat, --from-file), @~N the Nth staging before it', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const client = await connectClient(queue);
    const one = await stage(queue, ['--hold', '--', 'true'], env);
    const repeated = await stage(queue, ['--hold', '--repeat', '3', '--', 'true'], env);
    const fromFile = await fitq(['stage', '--hold', '--from-file', '-'], { queue, env, input: 'true\ntrue\n' });
    const lines = expectOk(fromFile).trim().split('\n');
    await stage(queue, ['--run-id', 'all', '--after', '@', '--after-end', '@~1', '--after-any', '@~2', '--', 'true'], env);
    expect((await client.getRun('all')).after).toEqual([
      { kind: 'ok', ids: lines },
      { kind: 'any', ids: one.ids },
      { kind: 'end', ids: repeated.ids },
    ]);
    // An array staged by the same call is no batch of run ids: @ names the array.
    const array = await stage(queue, ['--hold', '--array', '0-2', '--', 'true'], env);
    await stage(queue, ['--run-id', 'whole', '--after', '@', '--', 'true'], env);
    expect((await client.getRun('whole')).after).toEqual([{ kind: 'ok', ids: [], arrays: [array.array] }]);
    const refused = await fitq(['stage', '--after', '@~9', '--', 'true'], { queue, env });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr.trim()).toBe("Error: '@~9' is beyond the 6 stagings from this shell in this namespace");
  });
});
