/**
 * Dependencies through the real CLI and real workers: --after and its kinds,
 * `@` / `@~N`, unknown ids and cycles refused, dependents canceled (or kept)
 * when a dependency can never be met, cancel --dry-run, runs --tree, and a
 * chain whose middle worker is killed -9.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { openRunQueue } from '../support/bullmq.js';

function stateEnv(): Record<string, string> {
  return { FITQ_STATE_DIR: mkdtempSync(join(tmpdir(), 'fitq-state-')) };
}

async function stageOne(queue: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await fitq(['stage', ...args], { queue, env });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').at(-1)!;
}

describe('fitq stage --after', () => {
  it('a chain with every kind: runs per kind when the head fails; the rest are canceled with the reason, cascading', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const client = await connectClient(queue);
    const head = await stageOne(queue, ['--run-id', 'head', '--', 'sh', '-c', 'exit 3'], env);
    expect(head).toBe('head');
    // `@` is the last run staged from this shell (this test process), `@~1` the one before.
    await stageOne(queue, ['--run-id', 'ok', '--after', '@', '--', 'true'], env);
    await stageOne(queue, ['--run-id', 'ok2', '--after-ok', '@', '--', 'true'], env);
    await stageOne(queue, ['--run-id', 'notok', '--after-notok', '@~2', '--', 'true'], env);
    await stageOne(queue, ['--run-id', 'end', '--after-end', 'head', '--', 'true'], env);
    await stageOne(queue, ['--run-id', 'any', '--after-any', 'ok,notok', '--', 'true'], env);
    await stageOne(queue, ['--run-id', 'kept', '--after', 'head', '--keep-if-dependency-fails', '--', 'true'], env);
    const listed = await client.listRuns();
    expect(Object.fromEntries(listed.map((run) => [run.id, run.reason]))).toMatchObject({
      ok: 'waiting for dependency head (staged)',
      ok2: 'waiting for dependency ok (staged)',
      notok: 'waiting for dependency head (staged)',
      any: 'waiting for dependency ok (staged)',
    });
    expect(listed.find((run) => run.id === 'head')!.dependents).toEqual(['ok', 'notok', 'end', 'kept']);
    const bull = openRunQueue(client);
    expect(await bull.getJobCounts('prioritized', 'waiting-children')).toEqual({ prioritized: 1, 'waiting-children': 6 });

    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'chain']);
    await worker.waitForMessage('Run any completed');
    await worker.waitForMessage('Run end completed');
    const runs = Object.fromEntries((await client.listRuns()).map((run) => [run.id, [run.status, run.reason]]));
    expect(runs).toEqual({
      head: ['failed', 'exit code 3'],
      ok: ['canceled', 'dependency head failed (exit code 3)'],
      ok2: ['canceled', 'dependency ok canceled (dependency head failed (exit code 3))'],
      notok: ['completed', 'exit code 0'],
      end: ['completed', 'exit code 0'],
      any: ['completed', 'exit code 0'],
      kept: ['staged', 'can never start: dependency head failed (exit code 3) (kept: --keep-if-dependency-fails)'],
    });
    expect(worker.messages().filter((message) => /^Run (ok|ok2|kept) started/.test(message))).toEqual([]);

    // The graph: each run under what it waits for.
    const tree = (await fitq(['runs', '--tree'], { queue })).stdout;
    expect(tree.split('\n')).toEqual([
      "head failed sh -c 'exit 3' (exit code 3)",
      '├─ ok canceled true (dependency head failed (exit code 3)) [after-ok]',
      '│  ├─ ok2 canceled true (dependency ok canceled (dependency head failed (exit code 3))) [after-ok]',
      '│  └─ any completed true [after-any]',
      '├─ notok completed true [after-notok]',
      '│  └─ any [after-any] ^',
      '├─ end completed true [after-end]',
      '└─ kept staged true (can never start: dependency head failed (exit code 3) (kept: --keep-if-dependency-fails)) [after-ok]',
    ]);
    const edges = JSON.parse((await fitq(['runs', '--tree', '--json'], { queue })).stdout) as { edges: unknown[] };
    expect(edges.edges).toContainEqual({ dependency: 'head', run: 'kept', kind: 'ok' });
    expect(edges.edges).toContainEqual({ dependency: 'notok', run: 'any', kind: 'any' });

    // Restarting the head with --cascade stages the runs canceled for it again, waiting for it.
    const restarted = await fitq(['restart', 'head', '--cascade'], { queue });
    expect(restarted.exitCode, restarted.stderr).toBe(0);
    expect(restarted.stdout.split('\n')).toEqual([
      'Run head restarted: staged',
      'Run ok restarted (cascade): staged, waiting for its dependencies',
      'Run ok2 restarted (cascade): staged, waiting for its dependencies',
    ]);
    await worker.waitForMessage(/^Run head failed/);
    await client.waitForEnd('ok2');
    expect((await client.getRun('ok2')).attempts?.map((attempt) => attempt.status)).toEqual(['canceled']);
  });

  it('unknown ids, cycles and bad shorthands are refused at stage time (exit 2), nothing staged', async () => {
    const queue = newQueue();
    const env = stateEnv();
    const client = await connectClient(queue);
    for (const [args, message] of [
      [['--after', 'nosuchrun'], "unknown run or array 'nosuchrun' in a dependency (--after): nothing was staged"],
      [['--run-id', 'self', '--after', 'self'], "dependency on 'self' would make a cycle"],
      [['--after', '@'], "'@' names the runs last staged from this shell, but none was staged from it in this namespace"],
      [['--after', '@x'], "got '@x'"],
      [['--keep-if-dependency-fails'], '--keep-if-dependency-fails needs a dependency'],
    ] as const) {
      const result = await fitq(['stage', ...args, '--', 'true'], { queue, env });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
    expect(await client.listRuns()).toEqual([]);
    // A cycle through the API: a run of a batch may only wait for one staged before it.
    await expect(client.stage([
      { command: ['true'], runId: 'x', after: [{ kind: 'ok', ids: ['y'] }] },
      { command: ['true'], runId: 'y', after: [{ kind: 'ok', ids: ['x'] }] },
    ])).rejects.toThrow("dependency on 'y' would make a cycle");
    expect(await client.listRuns()).toEqual([]);
    // @ is per shell and per namespace: another namespace's runs are not @.
    await stageOne(queue, ['--', 'true'], env);
    expect((await fitq(['stage', '--after', '@', '--', 'true'], { queue: newQueue(), env })).exitCode).toBe(2);
  });

  it('cancel --dry-run lists the run and its cascade without canceling; cancel then cancels them all', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageOne(queue, ['--run-id', 'root', '--', 'true']);
    await stageOne(queue, ['--run-id', 'child', '--after', 'root', '--', 'true']);
    await stageOne(queue, ['--run-id', 'grandchild', '--after', 'child', '--', 'true']);
    await stageOne(queue, ['--run-id', 'cleanup', '--after-end', 'root', '--', 'true']);
    await stageOne(queue, ['--run-id', 'kept', '--after', 'root', '--keep-if-dependency-fails', '--', 'true']);
    const dry = await fitq(['cancel', 'root', '--dry-run'], { queue });
    expect(dry.exitCode, dry.stderr).toBe(0);
    const lines = dry.stdout.split('\n');
    expect(lines[0]).toBe('Would cancel 3 runs:');
    expect(lines.slice(2, 5).map((line) => line.split(/\s+/).slice(0, 2))).toEqual([['root', 'staged'], ['child', 'staged'], ['grandchild', 'staged']]);
    expect(lines.slice(5)).toEqual(['(child, grandchild: their dependencies could then never be met)']);
    const json = await fitq(['cancel', 'root', '--dry-run', '--json'], { queue });
    expect((JSON.parse(json.stdout) as { id: string }[]).map((run) => run.id)).toEqual(['root', 'child', 'grandchild']);
    expect((await client.listRuns()).every((run) => run.status === 'staged')).toBe(true);
    expect((await fitq(['cancel', 'root'], { queue })).exitCode).toBe(0);
    const statuses = Object.fromEntries((await client.listRuns()).map((run) => [run.id, run.status]));
    expect(statuses).toEqual({ root: 'canceled', child: 'canceled', grandchild: 'canceled', cleanup: 'staged', kept: 'staged' });
    expect((await client.getRun('cleanup')).reason).toBe('no live worker');
    // Removing a staged dependency cancels what waits for it.
    await stageOne(queue, ['--run-id', 'doomed', '--hold', '--', 'true']);
    await stageOne(queue, ['--run-id', 'orphan', '--after', 'doomed', '--', 'true']);
    expect((await fitq(['runs', 'rm', 'doomed'], { queue })).exitCode).toBe(0);
    expect(await client.getRun('orphan')).toMatchObject({ status: 'canceled', reason: 'dependency doomed was removed' });
  });

  it('the middle worker of a chain is killed -9: its run ends lost, after-ok dependents are canceled, after-notok and after-end ones run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageOne(queue, ['--run-id', 'first', '-r', 'a=1', '--', 'true']);
    await stageOne(queue, ['--run-id', 'middle', '-r', 'b=1', '--after', 'first', '--', 'sleep', '60']);
    await stageOne(queue, ['--run-id', 'next', '-r', 'a=1', '--after', 'middle', '--', 'true']);
    await stageOne(queue, ['--run-id', 'rescue', '-r', 'a=1', '--after-notok', 'middle', '--', 'true']);
    await stageOne(queue, ['--run-id', 'report', '-r', 'a=1', '--after-end', 'middle', '--', 'true']);
    const steady = spawnCliWorker(queue, ['-r', 'a=1', '--name', 'steady']);
    await steady.waitForMessage('Run first completed');
    const victim = spawnCliWorker(queue, ['-r', 'b=1', '--name', 'victim', '--lease', '1', '--kill-grace', '1']);
    await victim.waitForMessage('Run middle started');
    victim.process.kill('SIGKILL');
    await victim.exited;
    await steady.waitForMessage('Run report completed');
    await steady.waitForMessage('Run rescue completed');
    const runs = Object.fromEntries((await client.listRuns()).map((run) => [run.id, [run.status, run.reason]]));
    expect(runs.middle).toEqual(['lost', 'worker victim stopped renewing its lease']);
    expect(runs.next).toEqual(['canceled', 'dependency middle lost (worker victim stopped renewing its lease)']);
    expect(runs.rescue![0]).toBe('completed');
    expect(runs.report![0]).toBe('completed');
  });
});
