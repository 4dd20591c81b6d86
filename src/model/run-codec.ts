/**
 * A run's job data, both ways, by the field table (run-fields.ts): the flat
 * string fields of a run about to be staged (as signed) into its JSON, and
 * a stored run's JSON back into those exact fields. Fields with a default
 * come first, then the others, each in the table's order; a field at its
 * default is left out (`{"command":["true"],"resources":"cpu=1"}`), so a
 * short run's data stays under Redis's hash-max-listpack-value and its job
 * hash a listpack. Data written before, defaults and all, reads back the
 * same: an absent field reads as its default.
 */
import { LIFECYCLE_DATA_KEYS } from './parked.js';
import { fieldsOf, RUN_FIELDS, type RunFieldName, type RunFieldSpec } from './run-fields.js';

/** A run as flat string fields: the job hash with its data's fields over it (runFields), or a part of it. */
export type FlatFields = Readonly<Record<string, string | undefined>>;

const DATA_FIELDS = fieldsOf('data');
/** Written into every run's data, then the others when given. */
const DATA_ORDER: readonly RunFieldName[] = [
  ...DATA_FIELDS.filter((name) => spec(name).always !== undefined),
  ...DATA_FIELDS.filter((name) => spec(name).always === undefined),
];

function spec(name: RunFieldName): RunFieldSpec {
  return RUN_FIELDS[name];
}

/** JSON text as a value; `fallback` for none, or for text that is not JSON. */
export function parseJson<T>(value: string | undefined, fallback: T): T {
  if (value === undefined || value === '') return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** A field's text as the data holds it. */
function toData(kind: RunFieldSpec['kind'], text: string | undefined, always: unknown): unknown {
  switch (kind) {
    case 'number':
      return text === undefined ? always : Number(text);
    case 'flag':
      return text === '1';
    case 'json':
      return parseJson(text, always ?? {});
    default:
      return text ?? always;
  }
}

/** A field's data value as text. */
function toText(kind: RunFieldSpec['kind'], value: unknown): string {
  if (kind === 'flag') return value === true ? '1' : '0';
  return kind === 'json' ? JSON.stringify(value) : String(value);
}

/** Whether a data value is its field's default (left out of the data). */
function isDefault(name: RunFieldName, value: unknown): boolean {
  const { always, marksRun } = spec(name);
  return always !== undefined && marksRun !== true && JSON.stringify(value) === JSON.stringify(always);
}

/**
 * The job data (JSON text) of a run about to be staged, from its flat
 * fields: each field as its kind holds it, unless it is its default, the
 * lifecycle options spread over it.
 */
export function encodeRunData(fields: FlatFields): string {
  const data: Record<string, unknown> = {};
  for (const name of DATA_ORDER) {
    const { kind, always } = spec(name);
    const text = fields[name];
    if (text === undefined && always === undefined) continue;
    if (kind === 'spread') Object.assign(data, parseJson<Record<string, unknown>>(text, {}));
    else {
      const value = toData(kind, text, always);
      if (!isDefault(name, value)) data[name] = value;
    }
  }
  return JSON.stringify(data);
}

/**
 * The flat fields of a run's job data, exactly as they were staged (and
 * signed), a field left out as its default; none for data that is not a
 * fitq run's (no `command` list).
 */
export function runDataFields(dataJson: string | undefined): Record<string, string> {
  const data = parseJson<Record<string, unknown> | null>(dataJson, null);
  if (data === null || typeof data !== 'object' || !Array.isArray(data.command)) return {};
  const fields: Record<string, string> = {};
  for (const name of DATA_ORDER) {
    const { kind, always } = spec(name);
    if (kind === 'spread') {
      const spread = Object.fromEntries(LIFECYCLE_DATA_KEYS.flatMap((key) => (data[key] === undefined ? [] : [[key, data[key]]])));
      if (Object.keys(spread).length > 0) fields[name] = JSON.stringify(spread);
    } else if (data[name] !== undefined || always !== undefined) {
      fields[name] = toText(kind, data[name] ?? always);
    }
  }
  return fields;
}

/** Fields a signature covers that live in the job hash: written by the stage script beside the data, never changed (who staged the run). */
const SIGNED_HASH_FIELDS = (Object.keys(RUN_FIELDS) as RunFieldName[]).filter((name) => spec(name).home === 'hash' && spec(name).signed !== undefined);

/**
 * A run as it was staged (and signed), from its job hash: its data's fields
 * (runDataFields of `data`) and the signed fields the stage script wrote
 * beside it. What an edit starts from and re-signs.
 */
export function stagedRunFields(dataJson: string | undefined, hash: FlatFields): Record<string, string> {
  const fields = runDataFields(dataJson);
  for (const name of SIGNED_HASH_FIELDS) {
    const value = hash[name];
    if (value !== undefined) fields[name] = value;
  }
  return fields;
}
