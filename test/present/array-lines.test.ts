/**
 * How an array's line reads (present/array-lines.ts), from run records:
 * where it stands among the other runs, its indices as ranges, its status
 * counts in the lifecycle's order, the command its runs share with their
 * placeholders put back (or `*`), why its staged runs wait, and what its
 * runs do not share left blank.
 */
import { describe, expect, it } from 'vitest';
import { arrayLineCells, arrayLimits, collapseArrays, indexRanges, sharedCommand, statusSummary } from '../../src/present/array-lines.js';
import type { RunRecord, RunStatus } from '../../src/model/run-record.js';
import type { PoolResource } from '../../src/operations/pools.js';

let seq = 0;
function run(fields: Partial<RunRecord> & { id: string }): RunRecord {
  seq += 1;
  return { status: 'staged', command: ['true'], shell: false, cwd: '/', env: {}, resources: {}, requires: '', priority: 0, labels: {}, stagedAt: 0, seq, ...fields };
}

/** Runs of array `a1`, one per row of `params`, its command the template filled in as sweep.ts fills it. */
function sweep(template: string[], params: Record<string, string>[], extra: (index: number) => Partial<RunRecord> = () => ({})): RunRecord[] {
  return params.map((values, index) => {
    const fill = (word: string) => word.replace(/\{(\w+)\}/g, (_, name: string) => ({ ...values, index: String(index), array: 'a1' } as Record<string, string>)[name]!);
    return run({ id: `a1-${index}`, array: 'a1', arrayIndex: index, params: values, command: template.map(fill), ...extra(index) });
  });
}

describe('array lines', () => {
  it('puts each array where its first run stands, keeping the others as they are', () => {
    const before = run({ id: 'before' });
    const [a0, a1] = sweep(['echo', '{index}'], [{}, {}]);
    const between = run({ id: 'between' });
    const other = run({ id: 'b-0', array: 'b2', arrayIndex: 0 });
    const lines = collapseArrays([before, a0!, between, other, a1!], new Map([['a1', 4]]));
    expect(lines.map((line) => (line.array ? `${line.array.array}:${line.array.runs.map((r) => r.id).join(',')}` : line.run.id))).toEqual(['before', 'a1:a1-0,a1-1', 'between', 'b2:b-0']);
    expect(lines[1]!.run).toBe(a0);
    expect(lines[1]!.array!.limit).toBe(4);
    expect(lines[3]!.array!.limit).toBeUndefined();
  });

  it('reads limits from the pool, indices as ranges, and counts statuses in the order of a run\'s life', () => {
    const pool: PoolResource[] = [
      { name: 'license', capacity: 4_000_000n, used: 0n },
      { name: 'array.0123456789ab', capacity: 8_000_000n, used: 2_000_000n, array: { id: '0123456789ab', running: 2, staged: 5 } },
    ];
    expect([...arrayLimits(pool)]).toEqual([['0123456789ab', 8]]);
    expect(indexRanges([9, 0, 1, 2, 3, 7, 10, 11, 12])).toBe('0-3,7,9-12');
    expect(indexRanges([0, 2, 4, 6, 8, 10, 12])).toBe('0,2,4,6,8,10,…');
    expect(indexRanges([0, 2, 4, 6, 8, 10, 12], true)).toBe('0,2,4,6,8,10,12');
    const statuses: RunStatus[] = ['completed', 'staged', 'failed', 'running', 'staged', 'completed', 'staged'];
    expect(statusSummary(statuses.map((status, i) => run({ id: `s${i}`, status })))).toBe('3 staged, 1 running, 2 completed, 1 failed');
  });

  it('shows the command its runs share, each differing word as its placeholder when that gives every run\'s word, else *', () => {
    expect(sharedCommand(sweep(['python', 'train.py', '--lr={lr}', 'out/{lr}-{index}'], [{ lr: '0.1' }, { lr: '0.01' }]))).toBe('python train.py --lr={lr} out/{lr}-{index}');
    expect(sharedCommand(sweep(['echo', 'same'], [{}, {}]))).toBe('echo same');
    // 'x11' then 'x12': x{index}{index} would not give x12, the index where the words differ does.
    expect(sharedCommand(sweep(['echo', 'x1{index}'], [{}, {}]).map((r, i) => ({ ...r, arrayIndex: i + 1, command: ['echo', `x1${i + 1}`] })))).toBe('echo x1{index}');
    // The shell's one word: its other 0 is no index.
    expect(sharedCommand(sweep(['sleep 0.2; echo {index}'], [{}, {}, {}], () => ({ shell: true })))).toBe('sh -c "sleep 0.2; echo {index}"');
    // Words that no placeholder gives: `*`.
    expect(sharedCommand(sweep(['echo', '{index}'], [{}, {}]).map((r, i) => ({ ...r, command: ['echo', i === 0 ? 'a' : 'b'] })))).toBe('echo *');
    // A word that needs quotes keeps them; the shell's one word is shown as sh -c.
    expect(sharedCommand(sweep(['echo', 'a b {index}'], [{}, {}]))).toBe(`echo 'a b {index}'`);
    expect(sharedCommand(sweep(['echo {n} && true'], [{ n: '1' }, { n: '2' }], () => ({ shell: true })))).toBe('sh -c "echo {n} && true"');
    // A run given more words than the first.
    const grown = sweep(['echo', '{index}'], [{}, {}]);
    grown[1] = { ...grown[1]!, command: ['echo', '1', 'more'] };
    expect(sharedCommand(grown)).toBe('echo {index} *');
  });

  it('gives its id, status counts, why its staged runs wait, and blanks what its runs do not share', () => {
    const runs = sweep(['train', '{index}'], [{}, {}, {}], (index) => ({
      requires: 'gpu=1',
      status: index === 0 ? 'running' : 'staged',
      ...(index === 0 ? { worker: 'w1' } : { reason: index === 1 ? 'next in line on w1: waiting for gpu=1 > 0 free' : 'waiting for older run a1-1' }),
      labels: { sweep: 'x', i: String(index) },
    }));
    const [line] = collapseArrays(runs, new Map([['a1', 2]]));
    const cells = arrayLineCells(line!.array!, ['id', 'status', 'requires', 'command', 'labels', 'worker', 'array', 'why'], false, 0);
    expect(cells).toEqual(['a1_[0-2%2]', '2 staged, 1 running', 'gpu=1', 'train {index}', '', '', 'a1[0-2]', '[1] next in line on w1: waiting for gpu=1 > 0 free']);
    const sameWhy = runs.map((r) => (r.status === 'staged' ? { ...r, reason: 'no live worker' } : r));
    expect(arrayLineCells(collapseArrays(sameWhy)[0]!.array!, ['why'], false, 0)).toEqual(['no live worker']);
  });
});
