/**
 * The run selection shared by commands that act on runs (cli/run-selection.ts),
 * through `fitq cancel`, `fitq runs rm`, `hold`, `release`, `restart` and `wait`: --status, --label and --array
 * combined, ids with them, --dry-run (and --json) touching nothing, and
 * selections that match nothing or name an unknown array.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** A selection that matched nothing: said on stderr, exit 1 (`[]` on stdout with --json). */
function expectNothing(result: CliResult, json = false): string {
  expect([result.exitCode, result.stdout]).toEqual([1, json ? '[]' : '']);
  return result.stderr.trim();
}

async function stageArray(queue: string, args: string[]): Promise<{ ids: string[]; array: string }> {
  const result = await fitq(['stage', '-r', 'never=1', ...args, '--', 'true'], { queue });
  return { ids: expectOk(result).split('\n'), array: /Staged array (\S+)/.exec(result.stderr)?.[1] ?? '' };
}

async function statuses(queue: string): Promise<Record<string, string>> {
  const client = await connectClient(queue);
  try {
    return Object.fromEntries((await client.listRuns()).map((run) => [run.id, run.status]));
  } finally {
    await client.close();
  }
}

describe('selecting runs: cancel and runs rm', () => {
  it('cancel --array selects staged and running runs of that array; --dry-run lists them and touches nothing', async () => {
    const queue = newQueue();
    const a = await stageArray(queue, ['--array', '0-2', '--label', 'team=a']);
    const b = await stageArray(queue, ['--array', '0-1', '--label', 'team=b']);
    const before = await statuses(queue);

    const dry = expectOk(await fitq(['cancel', '--array', a.array.slice(0, 5), '--dry-run'], { queue })).split('\n');
    expect(dry[0]).toBe('Would cancel 3 runs:');
    expect(dry[1]).toMatch(/^ID\s+STATUS\s+ARRAY\s+LABELS\s+COMMAND$/);
    expect(dry.slice(2).map((line) => line.split(/\s+/).slice(0, 3))).toEqual(a.ids.map((id, i) => [id, 'staged', `${a.array}[${i}]`]));
    const json = JSON.parse(expectOk(await fitq(['cancel', '--array', a.array, '--label', 'team=a', '--dry-run', '--json'], { queue }))) as RunRecord[];
    expect(json.map((run) => [run.id, run.array])).toEqual(a.ids.map((id) => [id, a.array]));
    expect(await statuses(queue)).toEqual(before);

    // An id besides the selection: named first, each once.
    const canceled = expectOk(await fitq(['cancel', b.ids[1]!, '--array', a.array], { queue })).split('\n');
    expect(canceled).toEqual([b.ids[1]!, ...a.ids].map((id) => `Run ${id} canceled`));
    expect(await statuses(queue)).toEqual({ ...before, ...Object.fromEntries([b.ids[1]!, ...a.ids].map((id) => [id, 'canceled'])) });

    // Nothing left to cancel in it: said, exit 1; a label of no run likewise.
    expect(expectNothing(await fitq(['cancel', '--array', a.array], { queue }))).toBe(`No runs match --status staged,held,running --array ${a.array}: nothing to cancel.`);
    expect(expectNothing(await fitq(['cancel', '--label', 'team=c', '--dry-run'], { queue }))).toBe('No runs match --status staged,held,running --label team=c: nothing to cancel.');
    expect(expectNothing(await fitq(['cancel', '--label', 'team=c', '--json'], { queue }), true)).toBe('No runs match --status staged,held,running --label team=c: nothing to cancel.');
  });

  it('runs rm --status --label --array: all must hold; --dry-run removes nothing; an unknown array is refused', async () => {
    const queue = newQueue();
    const a = await stageArray(queue, ['--array', '0-3', '--label', 'k={index}']);
    const other = await stageArray(queue, ['--array', '0-1', '--label', 'k=1']);
    expectOk(await fitq(['cancel', a.ids[1]!, a.ids[2]!, other.ids[1]!], { queue }));

    const dry = JSON.parse(expectOk(await fitq(['runs', 'rm', '--array', a.array, '--status', 'canceled', '--dry-run', '--json'], { queue }))) as RunRecord[];
    expect(dry.map((run) => run.id)).toEqual([a.ids[1], a.ids[2]]);
    expect(Object.keys(await statuses(queue))).toHaveLength(6);

    expect(expectOk(await fitq(['runs', 'rm', '--array', a.array, '--status', 'canceled', '--label', 'k=1'], { queue }))).toBe('Removed 1 run.');
    expect(expectOk(await fitq(['runs', 'rm', '--status', 'canceled', '--json'], { queue }))).toBe(JSON.stringify([a.ids[2], other.ids[1]]));
    expect(Object.keys(await statuses(queue)).sort()).toEqual([a.ids[0], a.ids[3], other.ids[0]].sort());

    const unknown = await fitq(['runs', 'rm', '--array', 'ffffffffffff', '--dry-run'], { queue });
    expect(unknown).toMatchObject({ exitCode: 2, stdout: '', stderr: "Error: unknown array 'ffffffffffff' (no run of the namespace is part of it)" });
    const none = await fitq(['runs', 'rm', '--dry-run'], { queue });
    expect(none).toMatchObject({ exitCode: 2, stderr: 'Error: name the runs to remove, or select them with --status, --label, --array, --user or --mine' });
  });

  it('hold, release, update and restart select by --array and --status alike; --dry-run touches nothing', async () => {
    const queue = newQueue();
    const a = await stageArray(queue, ['--array', '0-1']);
    const other = await stageArray(queue, ['--array', '0']);
    const dry = expectOk(await fitq(['hold', '--array', a.array, '--dry-run'], { queue })).split('\n');
    expect(dry[0]).toBe('Would hold 2 runs:');
    expect(Object.values(await statuses(queue))).toEqual(['staged', 'staged', 'staged']);
    expectOk(await fitq(['hold', '--array', a.array], { queue }));
    expect(await statuses(queue)).toEqual({ [a.ids[0]!]: 'held', [a.ids[1]!]: 'held', [other.ids[0]!]: 'staged' });
    // update selects by --status and --array (and --where-label: its --label sets one).
    expect(expectNothing(await fitq(['update', '--array', a.array, '--status', 'held', '--where-label', 'none=none', '--priority', '5'], { queue }))).toBe(
      `No runs match --status held --label none=none --array ${a.array}: nothing to update.`,
    );
    expectOk(await fitq(['update', '--array', a.array, '--status', 'held', '--priority', '5'], { queue }));
    const client = await connectClient(queue);
    expect((await client.listRuns()).map((run) => run.priority)).toEqual([5, 5, 0]);
    await client.close();
    // --array alone releases the held runs of the array.
    expectOk(await fitq(['release', '--array', a.array], { queue }));
    expect(Object.values(await statuses(queue))).toEqual(['staged', 'staged', 'staged']);
    expectOk(await fitq(['cancel', '--array', a.array], { queue }));
    const restart = JSON.parse(expectOk(await fitq(['restart', '--status', 'canceled', '--dry-run', '--json'], { queue }))) as RunRecord[];
    expect(restart.map((run) => run.id)).toEqual(a.ids);
    expect(Object.values(await statuses(queue))).toEqual(['canceled', 'canceled', 'staged']);
    expectOk(await fitq(['restart', '--array', a.array], { queue }));
    expect(Object.values(await statuses(queue))).toEqual(['staged', 'staged', 'staged']);
    expect(expectNothing(await fitq(['restart', '--array', other.array], { queue }))).toBe(`No runs match --status ${['completed', 'failed', 'canceled', 'lost', 'rejected', 'timeout'].join(',')} --array ${other.array}: nothing to restart.`);
  });
});
