/**
 * Arrays and parameter sweeps through the real CLI and real workers:
 * `fitq stage --array LIST%N`, `--param`, `--param-file`; the limit held
 * across workers (read from the runs' recorded start and end times), the
 * environment and placeholders each run gets, why a throttled run waits,
 * the array's pool resource going with its last run, and refusals.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSweepFlags } from '../../src/cli/stage-sweep.js';
import { UsageError } from '../../src/errors.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** Exit 2, one `Error: ...` line holding `message`, nothing on stdout. */
function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([`Error: ${message}`]);
  expect(result.stdout).toBe('');
}

async function runsJson(queue: string, args: string[] = []): Promise<RunRecord[]> {
  return (JSON.parse(expectOk(await fitq(['runs', '--json', ...args], { queue }))) as { runs: RunRecord[] }).runs;
}

/** The most runs running at once, from their recorded start and end times (an end counts before a start at the same ms). */
function mostAtOnce(runs: readonly RunRecord[]): number {
  const events = runs.flatMap((run) => [
    { at: run.startedAt!, delta: 1 },
    { at: run.endedAt!, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let running = 0;
  let most = 0;
  for (const { delta } of events) {
    running += delta;
    most = Math.max(most, running);
  }
  return most;
}

/** Stages as `fitq stage ARGS` would (its flags parsed by the CLI's own modules), from this process. */
async function stageInProcess(queue: string, args: string[]): Promise<void> {
  const separator = args.indexOf('--');
  const flags: Record<string, string[]> = {};
  let flag = '';
  for (const word of args.slice(0, separator)) {
    if (word.startsWith('--')) flag = word.slice(2);
    else (flags[flag] ??= []).push(word);
  }
  const one = (name: string) => flags[name]?.[0];
  const client = await connectClient(queue);
  try {
    await client.stage({
      command: args.slice(separator + 1),
      array: parseSweepFlags({ array: one('array'), param: flags.param, 'param-file': one('param-file') }),
      ...(one('run-id') === undefined ? {} : { runId: one('run-id') }),
      ...(one('repeat') === undefined ? {} : { repeat: Number(one('repeat')) }),
      ...(flags.label === undefined ? {} : { labels: Object.fromEntries(flags.label.map((kv) => kv.split('='))) }),
      ...(flags.env === undefined ? {} : { env: Object.fromEntries(flags.env.map((kv) => kv.split('='))) }),
    });
  } finally {
    await client.close();
  }
}

/** The output of a run, as `fitq logs` prints it. */
async function logOf(queue: string, id: string): Promise<string> {
  return expectOk(await fitq(['logs', id], { queue })).trim();
}

describe('fitq stage --array', () => {
  it('runs an array with %2 on two workers, never more than 2 at once, each run with its index', async () => {
    const queue = newQueue();
    const staged = await fitq(
      ['stage', '--array', '0-9:3,1,20-21%2', '--label', 'seed={index}', '--shell', '--', 'echo {index} $FITQ_ARRAY_INDEX ${FITQ_ARRAY_ID} {{index}}; sleep 0.2'],
      { queue },
    );
    const ids = expectOk(staged).trim().split('\n');
    expect(ids).toHaveLength(7);
    const array = /^Staged array ([0-9a-f]{12}) \(7 runs\)$/m.exec(staged.stderr)?.[1];
    expect(array, staged.stderr).toBeDefined();
    // Two workers of 4 slots each: only the limit keeps them to 2.
    const workers = [0, 1].map((i) => fitq(['worker', '--name', `w${i}`, '--concurrency', '4', '--run-once'], { queue }));
    for (const worker of await Promise.all(workers)) expectOk(worker);

    const runs = await runsJson(queue, ['--array', array!.slice(0, 6)]);
    expect(runs.map((run) => run.id)).toEqual(ids);
    expect(runs.map((run) => run.status)).toEqual(Array(7).fill('completed'));
    expect(runs.map((run) => run.arrayIndex)).toEqual([0, 3, 6, 9, 1, 20, 21]);
    expect(runs.map((run) => run.labels.seed)).toEqual(['0', '3', '6', '9', '1', '20', '21']);
    expect(new Set(runs.map((run) => run.array))).toEqual(new Set([array]));
    expect(mostAtOnce(runs)).toBe(2);
    // (Which worker ran which is timing: the first to start may take every run, two at a time.)
    expect(runs.every((run) => run.worker === 'w0' || run.worker === 'w1')).toBe(true);
    expect(runs[1]!.env).toMatchObject({ FITQ_ARRAY_ID: array, FITQ_ARRAY_INDEX: '3', FITQ_ARRAY_COUNT: '7' });
    // {index} filled in, ${...} the shell's, {{index}} kept as {index}.
    expect(await logOf(queue, ids[1]!)).toBe(`3 3 ${array} {index}`);
    // The limit is no typed demand; `fitq runs` shows the array column.
    const table = expectOk(await fitq(['runs', '--array', array!, '--columns', 'id,requires,array'], { queue }));
    expect(table.split('\n')[2]).toMatch(new RegExp(`^${ids[1]}\\s+-\\s+${array}\\[3\\]$`));
  });

  it('says a run waits for its array, and forgets the array and its limit with its last run', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-array-'));
    const staged = await fitq(['stage', '--array', '0-1%1', '--cwd', dir, '--shell', '--', 'while [ ! -e go ]; do sleep 0.02; done'], { queue });
    const [first, second] = expectOk(staged).trim().split('\n');
    const array = /Staged array (\S+)/.exec(staged.stderr)![1]!;
    const client = await connectClient(queue);
    try {
      expect((await client.listPool()).map((r) => r.name)).toEqual([`array.${array}`]);
      spawnCliWorker(queue, ['--concurrency', '4']);
      await waitFor('the first run to start', async () => (await client.getRun(first!)).status === 'running');
      const waiting = await client.getRun(second!);
      expect(waiting).toMatchObject({ status: 'staged', reason: `waiting for array ${array} (1 of 1 running)` });
      expectRefused(
        await fitq(['pool', 'rm', `array.${array}`], { queue }),
        `'array.${array}' is the limit of array ${array}: it goes with the array's runs (fitq runs rm --array ${array}); change it with fitq pool set array.${array}=N`,
      );
      // A limit raised while the array runs lets the next run start.
      await client.setPool(`array.${array}=2`);
      await waitFor('the second run to start', async () => (await client.getRun(second!)).status === 'running');
      writeFileSync(join(dir, 'go'), '');
      await waitFor('both runs to end', async () => (await client.listRuns({ array })).every((run) => run.status === 'completed'));
      // Done: its limit is kept while its runs are, listed with the array (none running, none staged).
      expect(await client.listPool()).toEqual([{ name: `array.${array}`, capacity: 2_000_000n, used: 0n, array: { id: array, running: 0, staged: 0 } }]);
      expect(await client.redis.hgetall(client.keys.poolCapacity)).toEqual({ [`array.${array}`]: '2' });
      expect(expectOk(await fitq(['runs', 'rm', '--array', array], { queue })).trim()).toBe('Removed 2 runs.');
      expect(await client.redis.exists(client.keys.poolCapacity, client.keys.poolUsed)).toBe(0);
      expect(await client.redis.exists(client.keys.arrays)).toBe(0);
      expectRefused(await fitq(['runs', '--array', array], { queue }), `unknown array '${array}' (no run of the namespace is part of it)`);
    } finally {
      await client.close();
    }
  });
});

describe('a run waiting for its array', () => {
  it.each(['backfill', 'fifo'])('holds nothing back under --policy %s: a later run takes what it would need', async (policy) => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-array-'));
    const staged = await fitq(['stage', '-r', 'cpu=1', '--array', '0-2%1', '--cwd', dir, '--shell', '--', 'while [ ! -e go ]; do sleep 0.02; done'], { queue });
    const [first] = expectOk(staged).trim().split('\n');
    const [later] = expectOk(await fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue })).trim().split('\n');
    spawnCliWorker(queue, ['-r', 'cpu=2', '--policy', policy]);
    const client = await connectClient(queue);
    try {
      // Were the array's second run the blocked head (or fifo's), it would keep the one free cpu from the later run.
      await waitFor('the later run to complete', async () => (await client.getRun(later!)).status === 'completed');
      expect((await client.getRun(first!)).status).toBe('running');
      writeFileSync(join(dir, 'go'), '');
      await waitFor('the array to end', async () => (await client.listRuns({ array: (await client.getRun(first!)).array! })).every((run) => run.status === 'completed'));
    } finally {
      await client.close();
    }
  });
});

describe('fitq stage --param and --param-file', () => {
  it('stages the Cartesian product of --param lists, each run with its values in placeholders and FITQ_PARAM_*', async () => {
    const queue = newQueue();
    const staged = await fitq(
      ['stage', '--param', 'lr=0.1,0.01', '--param', 'bs=32,64', '--run-id', 'g-{lr}-{bs}', '--label', 'lr={lr}', 'grid=x{{lr}}',
        '--shell', '--', 'echo {lr} {bs} $FITQ_PARAM_LR $FITQ_PARAM_BS $FITQ_ARRAY_INDEX'],
      { queue },
    );
    expect(expectOk(staged).trim().split('\n')).toEqual(['g-0.1-32', 'g-0.1-64', 'g-0.01-32', 'g-0.01-64']);
    expectOk(await fitq(['worker', '--run-once'], { queue }));
    const runs = await runsJson(queue);
    expect(runs.map((run) => [run.status, run.arrayIndex, run.params, run.labels])).toEqual([
      ['completed', 0, { lr: '0.1', bs: '32' }, { lr: '0.1', grid: 'x{lr}' }],
      ['completed', 1, { lr: '0.1', bs: '64' }, { lr: '0.1', grid: 'x{lr}' }],
      ['completed', 2, { lr: '0.01', bs: '32' }, { lr: '0.01', grid: 'x{lr}' }],
      ['completed', 3, { lr: '0.01', bs: '64' }, { lr: '0.01', grid: 'x{lr}' }],
    ]);
    expect(await logOf(queue, 'g-0.01-64')).toBe('0.01 64 0.01 64 3');
    const shown = expectOk(await fitq(['runs', 'show', 'g-0.01-64'], { queue })).split('\n');
    expect(shown).toContain(`array:     ${runs[0]!.array} index 3`);
    expect(shown).toContain('params:    lr=0.01 bs=64');
  });

  it('stages a run per row of a CSV file, quoted fields included', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-params-'));
    const file = join(dir, 'params.csv');
    writeFileSync(file, 'name,msg\r\nplain,hello\r\n"with,comma","say ""hi"""\r\n\r\nlines,"a\nb"\r\n');
    const staged = await fitq(['stage', '--param-file', file, '--array', '%2', '--', 'printf', '%s|%s', '{name}', '{msg}'], { queue });
    const ids = expectOk(staged).trim().split('\n');
    expect(ids).toHaveLength(3);
    expectOk(await fitq(['worker', '--run-once'], { queue }));
    const runs = await runsJson(queue);
    expect(runs.map((run) => run.params)).toEqual([
      { name: 'plain', msg: 'hello' },
      { name: 'with,comma', msg: 'say "hi"' },
      { name: 'lines', msg: 'a\nb' },
    ]);
    expect(runs.map((run) => run.env.FITQ_PARAM_MSG)).toEqual(['hello', 'say "hi"', 'a\nb']);
    expect(await logOf(queue, ids[1]!)).toBe('with,comma|say "hi"');
  });

  it('refuses what it cannot stage as asked, quoting it, and stages nothing', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-params-'));
    const ragged = join(dir, 'ragged.csv');
    writeFileSync(ragged, 'a,b\n1,2\n3\n');
    const badName = join(dir, 'bad.csv');
    writeFileSync(badName, 'a,2b\n1,2\n');
    const cases: [string[], string][] = [
      [['--array', '0-3', '--', 'echo', '{seed}'], "unknown placeholder '{seed}' in the command '{seed}': use {index}, {array}, {id}"],
      [['--param', 'lr=1,2', '--label', 'k={bs}', '--', 'true'], "unknown placeholder '{bs}' in label 'k' '{bs}': use {index}, {array}, {id}, {lr}"],
      [['--array', '0-1', '--run-id', 'r-{id}', '--', 'true'], "unknown placeholder '{id}' in --run-id 'r-{id}': use {index}, {array}"],
      [['--array', '0-1', '--run-id', 'fixed', '--', 'true'], "--run-id 'fixed' names one run: give the array's runs a placeholder, like 'fixed-{index}'"],
      [['--param', '1x=a,b', '--', 'true'], "invalid parameter name '1x' in --param: use letters, digits and '_', not starting with a digit"],
      [['--param', 'index=1', '--', 'true'], "parameter name 'index' in --param is taken: {index} is the run's own"],
      [['--param', 'lr=', '--', 'true'], "invalid --param 'lr=': the list of values is empty"],
      [['--param', 'lr=1,,2', '--', 'true'], "invalid --param 'lr=1,,2': a value is empty (for empty values use --param-file)"],
      [['--param', 'lr=1', '--param', 'LR=2', '--', 'true'], "parameter 'LR' in --param given twice (as 'lr': both are FITQ_PARAM_LR)"],
      [['--param-file', ragged, '--', 'true'], `--param-file '${ragged}': line 3 has 1 field, the header 2: '3'`],
      [['--param-file', badName, '--', 'true'], `invalid parameter name '2b' in the header of --param-file '${badName}': use letters, digits and '_', not starting with a digit`],
      [['--array', '5-1', '--', 'true'], "invalid --array '5-1': the range '5-1' ends before it starts"],
      [['--array', '0-3%0', '--', 'true'], "invalid --array '0-3%0': the limit after % must be an integer from 1 to 100000, got '0'"],
      [['--array', '1,x', '--', 'true'], "invalid --array '1,x': 'x' is not an index from 0 to 10000000"],
      [['--array', '0-2,2', '--', 'true'], "invalid --array '0-2,2': index 2 is given twice"],
      [['--array', '%2', '--', 'true'], "--array '%2' gives only a limit: give indices too (--array 0-9%2), or --param/--param-file"],
      [['--array', '0-3', '--param', 'a=1', '--', 'true'], "--array '0-3' numbers the runs itself: with --param or --param-file give only a limit, like --array %4"],
      [['--array', '0-1', '--repeat', '2', '--', 'true'], '--repeat does not go with --array or --param: the array gives the number of runs'],
      [['--array', '0-1', '--env', 'FITQ_ARRAY_INDEX=7', '--', 'true'], "--env 'FITQ_ARRAY_INDEX': the array sets FITQ_ARRAY_* and FITQ_PARAM_* itself"],
    ];
    // Through the CLI, a few (each a process); the rest as the CLI parses them, in this process.
    const throughCli = new Set([0, 4, 6, 9, 16]);
    for (const [i, [args, message]] of cases.entries()) {
      if (throughCli.has(i)) expectRefused(await fitq(['stage', ...args], { queue }), message);
      else await expect(stageInProcess(queue, args), args.join(' ')).rejects.toThrow(new UsageError(message));
    }
    expect(await runsJson(queue)).toEqual([]);
  });
});
