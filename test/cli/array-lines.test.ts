/**
 * `fitq runs` reads a sweep as one line, as squeue shows a job array: an
 * array (`--array`, `--param`) is one line where its oldest run stands,
 * `ID_[INDICES%LIMIT]`, how many of its runs stand in each status, the
 * command its runs share; `--expand` and `--array ID` list its runs one a
 * line, `--status` and `--label` select runs before they are counted, and
 * `--json` lists every run.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { fitq, newQueue, type CliResult } from '../support/fitq.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** The rows of `fitq runs ARGS`, each cut into its cells at the header's columns. */
async function table(queue: string, args: string[] = []): Promise<Record<string, string>[]> {
  const [header = '', ...lines] = expectOk(await fitq(['runs', ...args], { queue })).trimEnd().split('\n');
  const titles = [...header.matchAll(/\S+/g)].map((match) => ({ title: match[0], at: match.index }));
  return lines.map((line) => Object.fromEntries(titles.map(({ title, at }, i) => [title, line.slice(at, titles[i + 1]?.at).trim()])));
}

async function stage(queue: string, args: string[]): Promise<{ ids: string[]; array?: string }> {
  const result = await fitq(['stage', ...args], { queue });
  const ids = expectOk(result).trim().split('\n');
  const array = /Staged array (\S+)/.exec(result.stderr)?.[1];
  return { ids, ...(array === undefined ? {} : { array }) };
}

describe('fitq runs: an array is one line', () => {
  it('collapses each array where its oldest run stands, with its indices, limit, status counts and shared command', async () => {
    const queue = newQueue();
    const before = await stage(queue, ['-r', 'cpu=1', '--', 'echo', 'before']);
    const seeds = await stage(queue, ['-r', 'cpu=1', 'mem=1G', '--array', '0-4%2', '--label', 'sweep=seed', '--', 'python', 'train.py', '--seed', '{index}']);
    const lrs = await stage(queue, ['-r', 'gpu=1', '--param', 'lr=0.1,0.01,0.001', '--', 'python', 'train.py', '--lr={lr}', '-o', 'r/{lr}']);
    const after = await stage(queue, ['-r', 'cpu=1', '--', 'echo', 'after']);
    const shell = await stage(queue, ['--array', '3,5,9-10', '--shell', '--', 'echo {index} && sleep 1']);
    expectOk(await fitq(['hold', seeds.ids[1]!], { queue }));
    expectOk(await fitq(['cancel', seeds.ids[3]!], { queue }));

    const rows = await table(queue);
    expect(rows.map((row) => row.ID)).toEqual([before.ids[0], `${seeds.array}_[0-4%2]`, `${lrs.array}_[0-2]`, after.ids[0], `${shell.array}_[3,5,9-10]`]);
    const [, seedLine, lrLine, , shellLine] = rows;
    expect(seedLine).toMatchObject({ STATUS: '3 staged, 1 held, 1 canceled', REQUIRES: 'cpu=1 mem=1G', COMMAND: 'python train.py --seed {index}', WORKER: '', EXIT: '', WHY: 'no live worker' });
    expect(lrLine).toMatchObject({ STATUS: '3 staged', REQUIRES: 'gpu=1', COMMAND: 'python train.py --lr={lr} -o r/{lr}', WHY: 'no live worker' });
    expect(shellLine).toMatchObject({ STATUS: '4 staged', REQUIRES: '-', COMMAND: 'sh -c "echo {index} && sleep 1"' });

    // --wide: the same lines, every column; the ARRAY column names the array and its indices, LABELS what its runs share.
    const wide = await table(queue, ['--wide']);
    expect(wide.map((row) => row.ID)).toEqual(rows.map((row) => row.ID));
    expect(wide[1]).toMatchObject({ ARRAY: `${seeds.array}[0-4]`, LABELS: 'sweep=seed', PRIORITY: '0' });

    // --expand: every run on its own line, as before; --array (a prefix): that array's runs.
    const every = [before, seeds, lrs, after, shell].flatMap((staged) => staged.ids);
    expect((await table(queue, ['--expand'])).map((row) => row.ID)).toEqual(every);
    const ofArray = await table(queue, ['--array', seeds.array!.slice(0, 6)]);
    expect(ofArray.map((row) => row.ID)).toEqual(seeds.ids);
    expect(ofArray.map((row) => row.STATUS)).toEqual(['staged', 'held', 'staged', 'canceled', 'staged']);

    // Filters select runs before they are counted: the line holds only the runs that match.
    expect(await table(queue, ['--status', 'held,canceled', '--columns', 'id,status'])).toEqual([{ ID: `${seeds.array}_[1,3%2]`, STATUS: '1 held, 1 canceled' }]);
    expect((await table(queue, ['--label', 'sweep=seed', '--status', 'staged'])).map((row) => [row.ID, row.STATUS])).toEqual([[`${seeds.array}_[0,2,4%2]`, '3 staged']]);
    expect((await table(queue, ['--status', 'held', '--expand', '--columns', 'id'])).map((row) => row.ID)).toEqual([seeds.ids[1]]);

    // --json lists every run, as before.
    const json = (JSON.parse(expectOk(await fitq(['runs', '--json'], { queue }))) as { runs: RunRecord[] }).runs;
    expect(json.map((run) => run.id)).toEqual(every);
  });

  it('cuts a scattered index list unless --wide, and names the runs that differ in a word it cannot read as a placeholder', async () => {
    const queue = newQueue();
    const indices = [0, 2, 4, 6, 8, 10, 12, 14];
    const scattered = await stage(queue, ['--array', indices.join(','), '--', 'echo', '{index}x{index}']);
    const list = await stage(queue, ['--param', 'f=a.txt,b.txt', '--param', 'n=1,2', '--', 'wc', '{f}', '{n}', 'same']);
    // `{a}{b}` is `11`, `12`, `21`, `22`: no placeholder put back in the first run's `11` gives them all.
    const unread = await stage(queue, ['--param', 'a=1,2', '--param', 'b=1,2', '--', 'echo', '{a}{b}', '{index}']);
    const rows = await table(queue, ['--columns', 'id,command']);
    expect(rows).toEqual([
      { ID: `${scattered.array}_[0,2,4,6,8,10,…]`, COMMAND: 'echo {index}x{index}' },
      { ID: `${list.array}_[0-3]`, COMMAND: 'wc {f} {n} same' },
      { ID: `${unread.array}_[0-3]`, COMMAND: 'echo * {index}' },
    ]);
    expect((await table(queue, ['--columns', 'id', '--wide']))[0]!.ID).toBe(`${scattered.array}_[${indices.join(',')}]`);
  });
});
