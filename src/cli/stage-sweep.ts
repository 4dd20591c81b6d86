/**
 * `fitq stage --array SPEC`, `--param NAME=V1,V2...` and `--param-file
 * FILE`: the flags and their parsing into an ArrayRequest (model/stage.ts;
 * model/sweep.ts makes the array's runs of it).
 *
 * --array takes Slurm's syntax: `0-19`, `1,3,5-9`, `0-99:2` (a step), each
 * optionally followed by `%N` (at most N of the array's runs at once); with
 * --param or --param-file only the limit, `%N`. --param values are a
 * comma-separated list; several --param give their Cartesian product (the
 * first varies slowest). --param-file is CSV: a header row of names, then a
 * run per row (quoted fields as RFC 4180: "a,b", "say ""hi"""); with
 * --param too, each row is combined with each of their products.
 */
import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { MAX_REPEAT } from '../model/stage.js';
import { MAX_ARRAY_INDEX, validateParamNames } from '../model/sweep.js';
import type { ArrayRequest } from '../model/stage.js';
import { decodeUtf8 } from '../text/utf8.js';

export const sweepFlags = {
  array: Flags.string({
    summary: 'Stage an array of runs: indices like 0-19, 1,3,5-9 or 0-99:2, and %N to run at most N at once (0-19%4).',
    description:
      'Each run gets FITQ_ARRAY_INDEX and FITQ_ARRAY_ID, and {index} in the command, --run-id and label values is its index. ' +
      'With --param or --param-file, give only the limit: --array %4.',
  }),
  param: Flags.string({
    multiple: true,
    summary: 'A parameter and its values, NAME=V1,V2,... (repeatable: one run per combination). {NAME} in the command is the value, also in FITQ_PARAM_NAME.',
  }),
  'param-file': Flags.string({ summary: 'A CSV file of parameters: a header row of names, then one run per row.' }),
};

export interface SweepFlags {
  array?: string | undefined;
  param?: string[] | undefined;
  'param-file'?: string | undefined;
}

const INTEGER = /^\d+$/;

function integer(text: string, spec: string): number {
  const value = Number(text);
  if (!INTEGER.test(text) || !Number.isSafeInteger(value) || value > MAX_ARRAY_INDEX) {
    throw new UsageError(`invalid --array ${quote(spec)}: ${quote(text)} is not an index from 0 to ${MAX_ARRAY_INDEX}`);
  }
  return value;
}

/** Parses `--array LIST[%N]` (LIST may be empty: `%N`). */
export function parseArraySpec(spec: string): { indices: number[] | undefined; limit: number | undefined } {
  const percent = spec.indexOf('%');
  const list = percent < 0 ? spec : spec.slice(0, percent);
  let limit: number | undefined;
  if (percent >= 0) {
    const text = spec.slice(percent + 1);
    limit = Number(text);
    if (!INTEGER.test(text) || limit < 1 || limit > MAX_REPEAT) {
      throw new UsageError(`invalid --array ${quote(spec)}: the limit after % must be an integer from 1 to ${MAX_REPEAT}, got ${quote(text)}`);
    }
  }
  if (list === '') {
    if (limit === undefined) throw new UsageError("--array '' is empty: give indices like 0-19, or a limit like %4");
    return { indices: undefined, limit };
  }
  const indices: number[] = [];
  const seen = new Set<number>();
  for (const item of list.split(',')) {
    const match = /^([^-:]*)(?:-([^:]*)(?::(.*))?)?$/.exec(item);
    if (!match || item === '') throw new UsageError(`invalid --array ${quote(spec)}: ${quote(item)} is not an index, a range A-B or A-B:STEP`);
    const first = integer(match[1]!, spec);
    const last = match[2] === undefined ? first : integer(match[2], spec);
    const step = match[3] === undefined ? 1 : integer(match[3], spec);
    if (last < first) throw new UsageError(`invalid --array ${quote(spec)}: the range ${quote(item)} ends before it starts`);
    if (step < 1) throw new UsageError(`invalid --array ${quote(spec)}: the step of ${quote(item)} must be at least 1`);
    for (let index = first; index <= last; index += step) {
      if (seen.has(index)) throw new UsageError(`invalid --array ${quote(spec)}: index ${index} is given twice`);
      if (indices.length >= MAX_REPEAT) throw new UsageError(`invalid --array ${quote(spec)}: more than ${MAX_REPEAT} runs`);
      seen.add(index);
      indices.push(index);
    }
  }
  return { indices, limit };
}

/** Parses the --param flags: each NAME=V1,V2,... */
export function parseParams(params: readonly string[]): { name: string; values: string[] }[] {
  const parsed = params.map((param) => {
    const equals = param.indexOf('=');
    if (equals < 0) throw new UsageError(`invalid --param ${quote(param)}: expected NAME=V1,V2,...`);
    const name = param.slice(0, equals);
    const text = param.slice(equals + 1);
    if (text === '') throw new UsageError(`invalid --param ${quote(param)}: the list of values is empty`);
    const values = text.split(',');
    if (values.includes('')) throw new UsageError(`invalid --param ${quote(param)}: a value is empty (for empty values use --param-file)`);
    return { name, values };
  });
  validateParamNames(parsed.map(({ name }) => name), '--param');
  return parsed;
}

/**
 * Parses CSV text into records of fields (RFC 4180: fields in double quotes
 * may hold commas, newlines and "" for a quote), each with the line it
 * starts on. Blank lines are skipped.
 */
export function parseCsv(text: string, path: string): { line: number; text: string; fields: string[] }[] {
  const records: { line: number; text: string; fields: string[] }[] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const start = i;
    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= text.length) throw new UsageError(`--param-file ${quote(path)}: line ${startLine}: a quoted field is not closed`);
          if (text[i] === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (text[i] === '\n') line++;
          field += text[i++];
        }
        if (i < text.length && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          throw new UsageError(`--param-file ${quote(path)}: line ${line}: text after a quoted field: ${quote(lineAt(text, start))}`);
        }
      } else {
        while (i < text.length && text[i] !== ',' && text[i] !== '\n') field += text[i++];
        if (field.endsWith('\r') && text[i] !== ',') field = field.slice(0, -1);
      }
      fields.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    const raw = text.slice(start, i).replace(/\r?\n$/, '');
    if (!(fields.length === 1 && fields[0] === '' && !raw.startsWith('"'))) records.push({ line: startLine, text: raw, fields });
  }
  return records;
}

function lineAt(text: string, start: number): string {
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? text.length : end).replace(/\r$/, '');
}

/** Reads --param-file: its header's names and a record of values per row. */
export function readParamFile(path: string): Record<string, string>[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read --param-file ${quote(path)}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message}`);
  }
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new UsageError(`--param-file ${quote(path)} is not valid UTF-8`);
  const [header, ...rows] = parseCsv(text.replace(/^\uFEFF/, ''), path);
  if (header === undefined) throw new UsageError(`--param-file ${quote(path)} is empty: give a header row of names, then a row per run`);
  const names = header.fields.map((name) => name.trim());
  validateParamNames(names, `the header of --param-file ${quote(path)}`);
  if (rows.length === 0) throw new UsageError(`--param-file ${quote(path)} has no rows after its header: give a row per run`);
  if (rows.length > MAX_REPEAT) throw new UsageError(`--param-file ${quote(path)} has ${rows.length} rows (at most ${MAX_REPEAT})`);
  return rows.map((row) => {
    if (row.fields.length !== names.length) {
      throw new UsageError(
        `--param-file ${quote(path)}: line ${row.line} has ${row.fields.length} field${row.fields.length === 1 ? '' : 's'}, the header ${names.length}: ${quote(row.text)}`,
      );
    }
    return Object.fromEntries(names.map((name, i) => [name, row.fields[i]!]));
  });
}

/** The Cartesian product of rows and parameter lists (rows outermost, then the lists in order). */
function product(rows: Record<string, string>[], params: { name: string; values: string[] }[]): Record<string, string>[] {
  let result = rows;
  for (const { name, values } of params) {
    if (result.length * values.length > MAX_REPEAT) {
      throw new UsageError(`too many runs: the parameters make more than ${MAX_REPEAT} combinations`);
    }
    result = result.flatMap((row) => values.map((value) => ({ ...row, [name]: value })));
  }
  return result;
}

/** The array of `fitq stage`'s flags, if any: undefined when none of --array, --param and --param-file is given. */
export function parseSweepFlags(flags: SweepFlags): ArrayRequest | undefined {
  if (flags.array === undefined && flags.param === undefined && flags['param-file'] === undefined) return undefined;
  const { indices, limit } = flags.array === undefined ? { indices: undefined, limit: undefined } : parseArraySpec(flags.array);
  const params = parseParams(flags.param ?? []);
  const fileRows = flags['param-file'] === undefined ? undefined : readParamFile(flags['param-file']);
  const sweeping = params.length > 0 || fileRows !== undefined;
  if (sweeping && indices !== undefined) {
    throw new UsageError(`--array ${quote(flags.array!)} numbers the runs itself: with --param or --param-file give only a limit, like --array %4`);
  }
  if (!sweeping && indices === undefined) {
    throw new UsageError(`--array ${quote(flags.array!)} gives only a limit: give indices too (--array 0-9%2), or --param/--param-file`);
  }
  if (fileRows) {
    const fileNames = Object.keys(fileRows[0]!);
    validateParamNames([...fileNames, ...params.map(({ name }) => name)], '--param and --param-file');
  }
  const rows = sweeping ? product(fileRows ?? [{}], params) : undefined;
  return {
    ...(indices === undefined ? {} : { indices }),
    ...(rows === undefined ? {} : { params: rows }),
    ...(limit === undefined ? {} : { limit }),
  };
}
