/**
 * What `fitq logs` says is missing from a run's log, from the numbers its
 * lines were stored with (model/logs.ts, OutputGaps): how many lines, and why.
 */
import { describe, expect, it } from 'vitest';
import { OutputGaps, type LogEntry } from '../../src/model/logs.js';

let ids = 0;
const line = (n: number | undefined, dropped: { slow?: number; refused?: number } = {}): LogEntry => ({
  id: `1-${ids++}`,
  kind: 'line',
  stream: 'stdout',
  line: String(n),
  ...(n === undefined ? {} : { n }),
  ...dropped,
});

const capped = (count: number) => `[fitq: ${count} line${count === 1 ? '' : 's'} not stored: a run's stored output is capped at its last 100 lines; use --output FILE to keep all of it]`;
const slow = (count: number) => `[fitq: ${count} lines dropped while Redis was slow: more of the run's output waited to be stored than its worker keeps]`;
const refused = (count: number) => `[fitq: ${count} lines not stored: Redis refused them]`;

describe('OutputGaps', () => {
  it('says nothing for lines in order, and counts the lines trimmed before the first kept', () => {
    const gaps = new OutputGaps(100);
    expect(gaps.notesBefore(line(1))).toEqual([]);
    expect(gaps.notesBefore(line(2))).toEqual([]);
    const trimmed = new OutputGaps(100);
    expect(trimmed.notesBefore(line(2))).toEqual([capped(1)]);
    expect(trimmed.notesBefore(line(3))).toEqual([]);
  });

  it('tells dropped while Redis was slow and refused by Redis from the rest, which the cap took', () => {
    const gaps = new OutputGaps(100);
    gaps.notesBefore(line(10));
    expect(gaps.notesBefore(line(30, { slow: 5, refused: 3 }))).toEqual([capped(11), slow(5), refused(3)]);
    expect(gaps.notesBefore(line(40, { slow: 9 }))).toEqual([slow(9)]);
  });

  it('counts each attempt from 1 after a restart, and says nothing where numbers are not known', () => {
    const gaps = new OutputGaps(100);
    gaps.notesBefore(line(7));
    expect(gaps.notesBefore({ id: '2-0', kind: 'restaged', reason: 'worker w1 died' })).toEqual([]);
    expect(gaps.notesBefore(line(3))).toEqual([capped(2)]);
    // Lines stored before fitq numbered them, and the first numbered line after them.
    expect(gaps.notesBefore(line(undefined))).toEqual([]);
    expect(gaps.notesBefore(line(50))).toEqual([]);
    expect(gaps.notesBefore({ id: '3-0', kind: 'end', status: 'completed' })).toEqual([]);
  });
});
