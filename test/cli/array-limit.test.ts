/**
 * An array's limit (`--array 0-1%1`) is the array's, not a demand of its
 * runs: a run of it never sees it (FITQ_RESOURCES), no demand people read
 * shows it (REQUIRES, the dashboard's staged shapes), and a run held back by
 * it says `waiting for array ID (R of N running…)`, never `array.ID=1`.
 * Through the real CLI and a real worker.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStagedShapes } from '../../src/operations/overview.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { cliWhy, connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

describe("an array's limit", () => {
  it('is not among what its runs see or what people read of their demands; a run it holds back says so in words', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-array-limit-'));
    const client = await connectClient(queue);
    const wait = 'while [ ! -e go ]; do sleep 0.02; done';
    const [blocker] = expectOk(await fitq(['stage', '-r', 'cpu=1', '--cwd', dir, '--shell', '--', wait], { queue })).trim().split('\n');
    spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    await waitFor('the blocker to start', async () => (await client.getRun(blocker!)).status === 'running');

    const staged = await fitq(['stage', '-r', 'cpu=1', '--array', '0-1%1', '--cwd', dir, '--shell', '--', `${wait}; echo "$FITQ_RESOURCES"`], { queue });
    const [first, second] = expectOk(staged).trim().split('\n');
    const array = /Staged array (\S+)/.exec(staged.stderr)![1]!;
    // The first run of the array is w1's blocked head: it keeps the array's one free slot, which the second would need.
    const expected = `waiting for array ${array} (0 of 1 running, the free one kept for older run ${first} on w1)`;
    await waitFor(`the second run to say '${expected}'`, async () => (await cliWhy(queue)).get(second!) === expected);
    const requires = expectOk(await fitq(['runs', '--columns', 'id,requires', '--array', array], { queue })).trim().split('\n').slice(1);
    expect(requires.map((line) => line.split(/\s+/))).toEqual([[first, 'cpu=1'], [second, 'cpu=1']]);
    // The dashboard's overview: the staged shapes by their demands.
    expect((await readStagedShapes(client)).map((shape) => shape.demands)).toEqual(['cpu=1']);

    writeFileSync(join(dir, 'go'), '');
    await waitFor('the array to end', async () => (await client.listRuns({ array })).every((run) => run.status === 'completed'));
    for (const id of [first, second]) expect(expectOk(await fitq(['logs', id!], { queue })).trim()).toBe('{"cpu":1}');
  });
});
