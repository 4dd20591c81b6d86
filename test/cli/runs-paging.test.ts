/**
 * `fitq runs` a page at a time, through the real CLI: the first screen by
 * default with a note of how many more, --limit, --all (past one page),
 * --json's cursor followed to its end while runs start, end, are removed
 * and staged between pages (each run listed once), WHY on every page, and
 * an array line counted by its tally when the page lists only some of its
 * runs.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';

interface Page {
  runs: RunRecord[];
  next: string | null;
}

function ok(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** The table's rows (no header), by their first cell. */
const tableIds = (stdout: string) => stdout.trim().split('\n').slice(1).map((row) => row.split(/\s+/)[0]!);

describe('fitq runs: a page at a time', () => {
  it('lists the first 100 by default and says how many more; --limit N; --all lists every run past one page, its header once', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids = (await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 620 })).runs.map((run) => run.id);

    const first = await fitq(['runs'], { queue });
    expect(tableIds(ok(first))).toEqual(ids.slice(0, 100));
    expect(first.stderr.trim()).toBe(`Listed the first 100 runs; 520 more runs: fitq runs --all, --limit N, or --cursor ${(await client.getRun(ids[99]!)).seq} for the next page.`);

    const three = await fitq(['runs', '--limit', '3', '--columns', 'id,why'], { queue });
    expect(tableIds(ok(three))).toEqual(ids.slice(0, 3));
    expect(three.stdout).toContain('no live worker');
    expect(three.stderr).toContain('617 more runs');

    const all = await fitq(['runs', '--all', '--columns', 'id,status'], { queue });
    expect(tableIds(ok(all))).toEqual(ids);
    expect(all.stdout.match(/^ID\s+STATUS$/gm)).toHaveLength(1);
    expect(all.stderr).toBe('');

    // Exactly the runs there are: no note.
    const exact = await fitq(['runs', '--limit', '620', '--columns', 'id'], { queue });
    expect(tableIds(ok(exact))).toEqual(ids);
    expect(exact.stderr).toBe('');
  });

  it("--json's cursor goes on to the end (next null), each run once, while runs start, end, are removed and staged between pages; WHY on every page", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const stage = async (resources: string, repeat: number) => (await client.stage({ command: ['true'], resources, repeat })).runs.map((run) => run.id);
    const early = await stage('nowhere=1', 30);
    const runnable = await stage('go=1', 5);
    const late = await stage('nowhere=1', 30);
    const page = async (args: string[]) => JSON.parse(ok(await fitq(['runs', '--json', '--limit', '20', ...args], { queue }))) as Page;

    const seen: RunRecord[] = [];
    let current = await page([]);
    seen.push(...current.runs);
    // Between pages: the runnable runs (not listed yet) start and end, a listed run and a run not listed yet are removed, new runs staged.
    expectOkResult(await fitq(['worker', '-r', 'go=1', '--run-once'], { queue, timeoutMs: 60_000 }));
    await client.removeRuns([early[0]!, late[10]!]);
    const added = await stage('nowhere=1', 3);
    while (current.next !== null) {
      current = await page(['--cursor', current.next]);
      seen.push(...current.runs);
    }
    const ids = seen.map((run) => run.id);
    expect(ids).toEqual([...early, ...runnable, ...late.filter((id) => id !== late[10]), ...added]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(seen.filter((run) => runnable.includes(run.id)).map((run) => run.status)).toEqual(Array(5).fill('completed'));
    // Every staged run listed, on whichever page, says why it waits.
    const staged = seen.filter((run) => run.status === 'staged');
    expect(staged.length).toBe(62);
    expect(staged.every((run) => run.reason === 'no live worker')).toBe(true);
    // The last page's next is null; its cursor given again lists nothing more.
    expect(current.next).toBeNull();
  });

  it('refuses a cursor that is no number, and --all with --limit, in one line (exit 2)', async () => {
    const queue = newQueue();
    for (const [args, message] of [
      [['--cursor', 'abc'], `invalid --cursor 'abc': expected the "next" of an earlier fitq runs --json (a number)`],
      [['--all', '--limit', '5'], '--all lists every run: it takes no --limit 5'],
    ] as const) {
      const result = await fitq(['runs', ...args], { queue });
      expect(result.exitCode, result.stderr).toBe(2);
      expect(result.stderr.trim()).toBe(`Error: ${message}`);
    }
  });

  it("an array line a page cuts short counts all of the array's runs by its tally, and --all lists it once, every index", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const single = (await client.stage({ command: ['true'], resources: 'nowhere=1' })).runs[0]!.id;
    const staged = await client.stage({ command: ['echo', '{index}'], resources: 'nowhere=1', array: { indices: Array.from({ length: 650 }, (_, i) => i) } });
    const array = staged.runs[0]!.array!;
    const columns = ['--columns', 'id,status,command'];

    const short = ok(await fitq(['runs', '--limit', '100', ...columns], { queue }));
    expect(tableIds(short)).toEqual([single, `${array}_[0-98,…]`]);
    expect(short).toMatch(new RegExp(`${array}_\\[0-98,…\\]\\s+650 not ended\\s+echo \\{index\\}`));

    const all = ok(await fitq(['runs', '--all', ...columns], { queue }));
    expect(tableIds(all)).toEqual([single, `${array}_[0-649]`]);
    expect(all).toMatch(/\s650 staged\s/);
  });
});

function expectOkResult(result: CliResult): void {
  expect(result.exitCode, result.stderr).toBe(0);
}
