/**
 * A big sweep read as one: the runs of an array (`fitq stage --array`,
 * `--param`) listed as ONE line, in the place of its oldest run, as
 * Slurm's squeue shows a job array: `<array>_[0-999%8]` (the indices of
 * the runs listed, then the array's limit), how many runs stand in each
 * status, and what its runs share. `fitq runs` and the dashboard's runs
 * page both list arrays so; `--expand`, `--array ID` (`?array=ID`) list
 * their runs one a line.
 */
import { ARRAY_RESOURCE_PREFIX } from '../resources/array-limit.js';
import type { ArrayTally } from '../model/array-tally.js';
import { fillPlaceholders } from '../model/placeholders.js';
import { RUN_STATUSES, type RunRecord } from '../model/run-record.js';
import { MICROS_PER_UNIT } from '../resources/amount.js';
import { oneLine } from '../text/quote.js';
import type { PoolResource } from '../operations/pools.js';
import { cutCell, formatCommand, runCells, type ColumnName } from './run-table.js';

/**
 * The runs of one array, as listed: its id, its runs (oldest first), its
 * limit, if it has one, and, when the listing selects runs by no status or
 * label, its tally: how all its runs stand, listed or not (a page lists
 * some of a big array's runs).
 */
export interface ArrayLine {
  array: string;
  runs: RunRecord[];
  limit?: number;
  tally?: ArrayTally;
}

/** A line of a listing: a run that is no array's, or an array's runs. */
export type ListLine = { run: RunRecord; array?: undefined } | { run: RunRecord; array: ArrayLine };

/** Index ranges shown before "…" unless wide: a filter may leave an array's indices scattered. */
const MAX_RANGES = 6;

/**
 * The runs (in listing order), each array's as one line where its first
 * run stands; every line keeps that run (`run`), so a page of lines goes by
 * its staging number. `limits`: each array's limit, by id; `tallies`: each
 * array's tally, by id (given when no status or label selects runs).
 */
export function collapseArrays(
  runs: readonly RunRecord[],
  limits: ReadonlyMap<string, number> = new Map(),
  tallies: ReadonlyMap<string, ArrayTally> = new Map(),
): ListLine[] {
  const lines: ListLine[] = [];
  const arrays = new Map<string, ArrayLine>();
  for (const run of runs) {
    if (run.array === undefined) {
      lines.push({ run });
      continue;
    }
    const known = arrays.get(run.array);
    if (known !== undefined) {
      known.runs.push(run);
      continue;
    }
    const limit = limits.get(run.array);
    const tally = tallies.get(run.array);
    const line: ArrayLine = { array: run.array, runs: [run], ...(limit === undefined ? {} : { limit }), ...(tally === undefined ? {} : { tally }) };
    arrays.set(run.array, line);
    lines.push({ run, array: line });
  }
  return lines;
}

/** Each array's limit (`%N`), by array id: the capacity of its pool resource `array.<id>`. */
export function arrayLimits(pool: readonly PoolResource[]): Map<string, number> {
  return new Map(pool.flatMap((resource) => (resource.array ? [[resource.array.id, Number(resource.capacity / MICROS_PER_UNIT)] as const] : [])));
}

/** Indices as ranges, `0-3,7,9-12`; cut after MAX_RANGES ranges (`…`) unless wide. */
export function indexRanges(indices: readonly number[], wide = false): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    ranges.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return !wide && ranges.length > MAX_RANGES ? `${ranges.slice(0, MAX_RANGES).join(',')},…` : ranges.join(',');
}

/** How many runs its tally counts beyond those the line lists (0: none, or no tally). */
export function unlistedRuns(line: ArrayLine): number {
  if (line.tally === undefined) return 0;
  return Math.max(0, line.tally.open + line.tally.ok + line.tally.notok - line.runs.length);
}

/** An array line's id, as squeue's: `<array>_[0-999%8]`; `…` after the indices when it has runs the line does not list. */
export function arrayLineId(line: ArrayLine, wide = false): string {
  const indices = line.runs.flatMap((run) => (run.arrayIndex === undefined ? [] : [run.arrayIndex]));
  const ranges = indexRanges(indices, wide);
  const more = unlistedRuns(line) > 0 && !ranges.endsWith('…') ? ',…' : '';
  return `${line.array}_[${ranges}${more}${line.limit === undefined ? '' : `%${line.limit}`}]`;
}

/**
 * How an array's runs stand by its tally, when the line lists only some of
 * them: `99900 not ended, 88 completed, 12 ended otherwise` (the tally
 * does not tell staged, held and running apart, nor the ways a run ends
 * other than completed).
 */
export function tallySummary(tally: ArrayTally): string {
  return [
    [tally.open, 'not ended'],
    [tally.ok, 'completed'],
    [tally.notok, 'ended otherwise'],
  ].flatMap(([count, words]) => (count === 0 ? [] : [`${count} ${words}`])).join(', ');
}

/** How many of the runs stand in each status, in the lifecycle's order, none of those at zero: `700 staged, 12 running, 288 completed`. */
export function statusSummary(runs: readonly RunRecord[]): string {
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
  return RUN_STATUSES.flatMap((status) => (counts.has(status) ? [`${counts.get(status)} ${status}`] : [])).join(', ');
}

/** A run's placeholder values (sweep.ts): its parameters, `index`, `array`, `id`. */
function placeholderValues(run: RunRecord): Record<string, string> {
  return { ...run.params, index: String(run.arrayIndex ?? ''), array: run.array ?? '', id: run.id };
}

/** Braces doubled, as a template writes a literal brace. */
const literal = (text: string) => text.replace(/[{}]/g, (brace) => brace + brace);

/** The longest start (or, with `fromEnd`, end) every word shares. */
function sharedEdge(words: readonly string[], fromEnd: boolean): string {
  const first = words[0] ?? '';
  let length = 0;
  const at = (word: string, i: number) => (fromEnd ? word[word.length - 1 - i] : word[i]);
  while (length < first.length && words.every((word) => length < word.length && at(word, length) === at(first, length))) length++;
  return fromEnd ? first.slice(first.length - length) : first.slice(0, length);
}

/**
 * A command word that differs between the runs, as the template it was
 * staged with, if the first run's values put back as placeholders give
 * every run's word: in the whole word (`--lr={lr}`), else only where the
 * words differ (`sleep 1; echo {index}`, whose other `1` is no index);
 * else `*`.
 */
function templateWord(runs: readonly RunRecord[], at: number): string {
  const first = runs[0]!;
  const values = Object.entries(placeholderValues(first)).filter(([, value]) => value !== '').sort(([, a], [, b]) => b.length - a.length);
  const withPlaceholders = (text: string) => values.reduce((template, [name, value]) => template.split(value).join(`{${name}}`), literal(text));
  const gives = (template: string) => runs.every((run) => fillPlaceholders(template, placeholderValues(run)) === run.command[at]);
  const word = first.command[at] ?? '';
  const whole = withPlaceholders(word);
  if (gives(whole)) return whole;
  const words = runs.map((run) => run.command[at] ?? '');
  const head = sharedEdge(words, false);
  const tail = sharedEdge(words.map((text) => text.slice(head.length)), true);
  const middle = literal(head) + withPlaceholders(word.slice(head.length, word.length - tail.length)) + literal(tail);
  return gives(middle) ? middle : '*';
}

/** The command the runs share, their differing words as the placeholders they were staged with (`python train.py --lr {lr}`) or `*`. */
export function sharedCommand(runs: readonly RunRecord[]): string {
  const first = runs[0]!;
  const words = first.command.map((word, at) => (runs.every((run) => run.command[at] === word) ? undefined : templateWord(runs, at)));
  // A run given more words (by an update) than the first: `*` for them.
  if (runs.some((run) => run.command.length > first.command.length)) words.push('*');
  if (words.every((word) => word === undefined)) return formatCommand(first);
  const shown = words.map((word, at) => word ?? first.command[at]!);
  if (first.shell) return formatCommand({ ...first, command: shown });
  // Each word as formatCommand quotes it, a template's braces and `*` left unquoted.
  return shown.map((word, at) => (words[at] !== undefined && /^[\w@%+=:,./{}*-]+$/.test(word) ? word : formatCommand({ ...first, command: [word] }))).join(' ');
}

/**
 * Why the array's staged runs wait (its held runs, when none is staged: the
 * STATUS counts them): their reason when they all give the same, else the
 * oldest one's, after its index (`[7] next in line on w1: …`); blank when
 * none waits.
 */
function sharedWhy(runs: readonly RunRecord[]): string {
  const ofStatus = (status: string) => runs.filter((run) => run.status === status && run.reason !== undefined);
  const staged = ofStatus('staged');
  const waiting = staged.length > 0 ? staged : ofStatus('held');
  const first = waiting[0];
  if (first === undefined) return '';
  const reason = oneLine(first.reason ?? '');
  return waiting.every((run) => run.reason === first.reason) ? reason : `[${first.arrayIndex ?? ''}] ${reason}`;
}

/**
 * An array line's cells, in the columns asked for: its id and status
 * summary, the command its runs share, why its waiting runs wait, and in
 * every other column what all its runs show alike, or nothing.
 */
export function arrayLineCells(line: ArrayLine, columns: readonly ColumnName[], wide: boolean, now: number): string[] {
  return columns.map((name) => {
    switch (name) {
      case 'id':
        return arrayLineId(line, wide);
      case 'status':
        return line.tally !== undefined && unlistedRuns(line) > 0 ? tallySummary(line.tally) : statusSummary(line.runs);
      case 'command':
        return cutCell(name, sharedCommand(line.runs), wide);
      case 'why':
        return sharedWhy(line.runs);
      case 'array':
        return `${line.array}[${indexRanges(line.runs.map((run) => run.arrayIndex ?? 0), wide)}]`;
      default: {
        // The first run's cell, unless another run's differs (looked at until one does).
        const cell = (run: RunRecord) => runCells(run, [name], wide, now)[0]!;
        const first = cell(line.runs[0]!);
        return line.runs.every((run, i) => i === 0 || cell(run) === first) ? first : '';
      }
    }
  });
}

/** Whether an array among these runs has a limit (each of its runs demands 1 of `array.<id>`): only then is the pool read for it. */
export function anyArrayLimit(runs: readonly RunRecord[]): boolean {
  return runs.some((run) => run.array !== undefined && Object.hasOwn(run.resources, `${ARRAY_RESOURCE_PREFIX}${run.array}`));
}

/** The rows of a listing's lines: a run's cells as `fitq runs` prints them, an array's as arrayLineCells. */
export function lineRows(lines: readonly ListLine[], columns: readonly ColumnName[], wide: boolean, now = Date.now()): string[][] {
  return lines.map((line) => (line.array ? arrayLineCells(line.array, columns, wide, now) : runCells(line.run, columns, wide, now)));
}
