/**
 * How `fitq stage` reads --array, --param and --param-file, and how
 * placeholders are filled in: pure functions, no Redis (the CLI and workers
 * are in sweep.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseArraySpec, parseCsv, parseParams, parseSweepFlags } from '../../src/cli/stage-sweep.js';
import { fillPlaceholders, placeholdersOf } from '../../src/model/placeholders.js';

describe('--array', () => {
  it('takes indices, ranges, steps and a limit, as Slurm does, in the order given', () => {
    expect(parseArraySpec('0-3')).toEqual({ indices: [0, 1, 2, 3], limit: undefined });
    expect(parseArraySpec('1,3,5-9')).toEqual({ indices: [1, 3, 5, 6, 7, 8, 9], limit: undefined });
    expect(parseArraySpec('0-99:2').indices).toHaveLength(50);
    expect(parseArraySpec('0-99:2').indices?.at(-1)).toBe(98);
    expect(parseArraySpec('7,2%3')).toEqual({ indices: [7, 2], limit: 3 });
    expect(parseArraySpec('%4')).toEqual({ indices: undefined, limit: 4 });
    for (const bad of ['', '%', '1-', '-1', 'a', '1-2:0', '1-2:x', '1,,2', '3-1', '0-100000%1', '1%2%3', '1.5']) {
      expect(() => parseArraySpec(bad), bad).toThrow(/--array/);
    }
  });
});

describe('--param and --param-file', () => {
  it('gives the product of the lists, the first varying slowest, after each CSV row', () => {
    expect(parseParams(['lr=0.1,0.01', 'bs=32'])).toEqual([{ name: 'lr', values: ['0.1', '0.01'] }, { name: 'bs', values: ['32'] }]);
    expect(parseSweepFlags({ param: ['a=1,2', 'b=x,y'], array: '%2' })).toEqual({
      params: [{ a: '1', b: 'x' }, { a: '1', b: 'y' }, { a: '2', b: 'x' }, { a: '2', b: 'y' }],
      limit: 2,
    });
    expect(parseSweepFlags({ array: '0-1' })).toEqual({ indices: [0, 1] });
    expect(parseSweepFlags({})).toBeUndefined();
  });

  it('reads CSV: quoted commas, quotes, line breaks and CRLF; blank lines skipped; each record with its first line', () => {
    const records = parseCsv('a,b\r\n"x,1","say ""hi"""\r\n\r\n"two\nlines",\n,last', 'f.csv');
    expect(records.map(({ line, fields }) => [line, fields])).toEqual([
      [1, ['a', 'b']],
      [2, ['x,1', 'say "hi"']],
      [4, ['two\nlines', '']],
      [6, ['', 'last']],
    ]);
    expect(() => parseCsv('a\n"open', 'f.csv')).toThrow("--param-file 'f.csv': line 2: a quoted field is not closed");
    expect(() => parseCsv('a,b\n"x"y,1\n', 'f.csv')).toThrow(`--param-file 'f.csv': line 2: text after a quoted field: '"x"y,1'`);
  });
});

describe('placeholders', () => {
  it('fills {name}, keeps {{name}} as {name}, and leaves ${name} and other braces alone', () => {
    const text = "echo {lr} ${HOME} {{lr}} awk '{print $1}' {} {lr}x";
    expect(placeholdersOf(text)).toEqual(['lr', 'lr']);
    expect(fillPlaceholders(text, { lr: '0.1' })).toBe("echo 0.1 ${HOME} {lr} awk '{print $1}' {} 0.1x");
  });
});
