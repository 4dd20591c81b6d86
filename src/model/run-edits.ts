/**
 * What `fitq update` may change in a staged run, and how each change edits
 * the run's fields: priority, demands, labels, pinned GPUs, time limit,
 * each checked as staging checks it (run-checks.ts); and what changed, as
 * users see it. Reading and writing the runs is operations/update.ts's.
 */

import { UsageError } from '../errors.js';
import { formatHumanAmount } from '../resources/amount.js';
import { parseDeviceList } from '../resources/devices.js';
import {
  Demands,
  formatResources,
  parseResourceSpecs,
  sameResources,
  sortResources,
  specParts,
  typedSpecText,
  toResources,
  type ResourceInput,
  type Resources,
} from '../resources/spec.js';
import { quote } from '../text/quote.js';
import { formatTimeLimit } from '../units/duration.js';
import { ARRAY_RESOURCE_PREFIX, withoutArrayLimits } from '../resources/array-limit.js';
import { decodeRun, type KnownParts } from './run-decode.js';
import { checkGpuMemory, parsePinnedGpus, timeFields, validateLabels, validatePriority } from './run-checks.js';
import { shapeOf } from './stage.js';
import { labelsOf } from './labels.js';

/** What to change in runs; a change not given stays as it is. */
export interface RunChanges {
  /** Higher runs first: an integer within ±1,000,000. */
  priority?: number;
  /**
   * Demands to change: specs as typed (`"gpu=2 mem=16G"`), or a map of name
   * to millionths. The demands named take these amounts (0 removes one, as
   * `-r mem=0`); the others stay, as `scontrol update` changes only what it
   * is given.
   */
  resources?: ResourceInput;
  /** Labels to set: added, or replacing the value of a label the run has. */
  labels?: Record<string, string>;
  /** Keys of labels to remove. */
  unlabel?: readonly string[];
  /** GPU devices to pin runs to, like "0,1"; null unpins them. */
  gpus?: string | null;
  /** Time limit, ms or as typed (`2h30m`); null removes it (and its time signal). A time signal the run has is kept, and must still come after its start. */
  timeLimit?: number | string | null;
}

/** A run's data as its string fields (run-data.ts, dataFields), edited in place. */
export type Fields = Record<string, string>;

/** A run being edited: its data's fields, and its demands as they say them, parsed once. */
export interface EditedRun {
  fields: Fields;
  /** Exact demands, as `fields.resources` says them. */
  demands: Resources;
  /** Set by a change of demands: the new typed text (`requires`) with the amounts it says, so it is not parsed again. */
  typed?: Demands;
}

interface Edit<K extends keyof RunChanges> {
  /** The CLI flag that asks for it, named when no change is given. */
  flag: string;
  /** Writes the change into a run's fields, checked as staging checks it; throws UsageError. */
  apply(run: EditedRun, value: Exclude<RunChanges[K], undefined>): void;
}

/**
 * What each change does to a run's fields. A new editable field (e.g. a
 * time limit) is one entry here and its member in RunChanges (and its flag
 * in src/commands/update.ts); its check is staging's own. The checks that
 * take several fields together (pinned GPUs against the gpu demand) are in
 * `checkRun`, the staged shape in `shapeOfFields`.
 */
const EDITS: { [K in keyof RunChanges]-?: Edit<K> } = {
  priority: {
    flag: '--priority',
    apply: ({ fields }, priority) => {
      fields.priority = String(validatePriority(priority));
    },
  },
  resources: {
    flag: '-r',
    apply: (run, resources) => {
      const { fields } = run;
      const merged = mergeDemands(fields.requires, run.demands, resources);
      run.demands = merged.demands;
      run.typed = merged.typed;
      fields.resources = formatResources(merged.demands);
      if (merged.requires === undefined) delete fields.requires;
      else fields.requires = merged.requires;
    },
  },
  labels: {
    flag: '--label',
    apply: ({ fields }, labels) => {
      fields.labels = validateLabels({ ...labelsOf(fields), ...labels });
    },
  },
  unlabel: {
    flag: '--unlabel',
    apply: ({ fields }, keys) => {
      const labels = labelsOf(fields);
      for (const key of keys) delete labels[key];
      fields.labels = validateLabels(labels);
    },
  },
  gpus: {
    flag: '--gpus',
    apply: ({ fields }, gpus) => {
      if (gpus === null) delete fields.gpus;
      else fields.gpus = parseDeviceList(gpus, '--gpus').join(',');
    },
  },
  timeLimit: {
    flag: '--time-limit',
    apply: ({ fields }, timeLimit) => {
      delete fields.timeLimit;
      const signal = fields.timeSignal;
      delete fields.timeSignal;
      if (timeLimit !== null) Object.assign(fields, timeFields(timeLimit, signal));
    },
  },
};

const EDIT_NAMES = Object.keys(EDITS) as (keyof RunChanges)[];

/** One field that changes, as users see it. */
export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

/** A UsageError for changes that are not RunChanges, or none at all (checked before any run is read). */
export function checkChanges(changes: RunChanges): void {
  if (typeof changes !== 'object' || changes === null) throw new UsageError('invalid changes: expected an object');
  const unknown = Object.keys(changes).find((key) => !(EDIT_NAMES as string[]).includes(key));
  if (unknown !== undefined) throw new UsageError(`cannot update ${quote(unknown)}: a run's ${EDIT_NAMES.join(', ')} may be updated`);
  if (EDIT_NAMES.every((name) => changes[name] === undefined)) {
    const flags = EDIT_NAMES.map((name) => EDITS[name].flag);
    throw new UsageError(`nothing to update: give ${flags.slice(0, -1).join(', ')} or ${flags[flags.length - 1]}`);
  }
  const both = (changes.unlabel ?? []).find((key) => changes.labels !== undefined && Object.hasOwn(changes.labels, key));
  if (both !== undefined) throw new UsageError(`label ${quote(both)} is both set and removed: give it to --label or --unlabel, not both`);
}

/**
 * A run's data fields with the changes applied, each checked as staging
 * checks it, without its signature (signing it anew is the editor's): an
 * array's limit is kept, and the fields are checked together (checkRun).
 * `demands` are the run's as `before` says them, parsed once by the caller.
 */
export function editedFields(id: string, before: Readonly<Fields>, demands: Resources, changes: RunChanges, array: string | undefined): EditedRun {
  const after: EditedRun = { fields: { ...before }, demands };
  delete after.fields.signature;
  for (const name of EDIT_NAMES) {
    const value = changes[name];
    if (value !== undefined) (EDITS[name] as Edit<typeof name>).apply(after, value as never);
  }
  keepArrayLimit(array, demands, after);
  checkRun(id, after);
  return after;
}

/** The checks that take several fields of an edited run together. */
function checkRun(id: string, { fields, demands }: EditedRun): void {
  try {
    checkGpuMemory(demands, fields.gpus === undefined ? [] : fields.gpus.split(',').map(Number));
    if (fields.gpus === undefined) return;
    parsePinnedGpus(fields.gpus, demands);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`run ${quote(id)}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** The staged-index shape of an edited run, as staging computes it (stage.ts, shapeOf). */
export function shapeOfEdited({ fields, demands }: EditedRun): string {
  const timeLimit = fields.timeLimit ? Number(fields.timeLimit) : undefined;
  return shapeOf(demands, fields.gpus ? fields.gpus.split(',').map(Number) : [], timeLimit, fields);
}

/**
 * A run's demands changed by an edit: the demands it names take their new
 * amounts (0 removes one), the others stay. Their typed text (`requires`,
 * what `fitq runs` shows) keeps each demand where it was, as it was typed,
 * a changed one as the edit typed it, and adds new ones at the end; a
 * demand never typed (staged from amounts) is written in human units.
 */
function mergeDemands(requires: string | undefined, stored: Resources, input: ResourceInput): { demands: Resources; typed: Demands; requires?: string } {
  const named = toResources(input, { keepZero: true });
  const demands = new Map(stored);
  for (const [name, micros] of named) {
    if (micros === 0n) demands.delete(name);
    else demands.set(name, micros);
  }
  const newParts = typedParts(input, named);
  const parts: [string, string][] = [];
  for (const [name, part] of typedDemandParts(requires, stored)) {
    if (!named.has(name)) parts.push([name, part]);
    else if (named.get(name)! > 0n) parts.push([name, newParts.get(name)!]);
  }
  for (const [name, micros] of named) if (micros > 0n && !stored.has(name)) parts.push([name, newParts.get(name)!]);
  const text = parts.map(([, part]) => part).join(' ');
  // Each part says the amount its demand now has: the typed text with its amounts, for the record (no parse again).
  const typed = new Demands(sortResources(new Map(parts.map(([name]) => [name, demands.get(name)!]))), text);
  return { demands: sortResources(demands), typed, ...(parts.length === 0 ? {} : { requires: text }) };
}

const nameOfPart = (part: string): string => part.slice(0, part.indexOf('='));

const humanPart = (name: string, micros: bigint): string => `${name}=${formatHumanAmount(micros)}`;

/** The parts of an edit's demands by name: as typed, or in human units for a map of amounts. */
function typedParts(input: ResourceInput, named: Resources): Map<string, string> {
  const typed = typedSpecText(input);
  // (No typed text: a map of amounts, in human units.)
  if (typed === '') return new Map([...named].map(([name, micros]) => [name, humanPart(name, micros)]));
  return new Map(specParts(typed).map((part) => [nameOfPart(part), part]));
}

/**
 * A run's demands as parts by name, in the order they were typed when the
 * typed text still says exactly what it demands (an array's limit, never
 * typed, aside), else in human units; those never typed follow.
 */
function typedDemandParts(typed: string | undefined, stored: Resources): [string, string][] {
  const own = withoutArrayLimits(stored);
  let parts: [string, string][] = [];
  try {
    if (typed !== undefined && sameResources(parseResourceSpecs([typed]), own)) {
      parts = specParts(typed).map((part): [string, string] => [nameOfPart(part), part]).filter(([name]) => own.has(name));
    }
  } catch {
    // Not a spec (written by hand): the amounts in human units.
  }
  const typedNames = new Set(parts.map(([name]) => name));
  for (const [name, micros] of own) if (!typedNames.has(name)) parts.push([name, humanPart(name, micros)]);
  return parts;
}

/**
 * A run of an array with a limit (`--array 0-9%2`) demands one of its
 * array's pool resource (sweep.ts): new demands keep it, or the run would
 * escape the limit.
 */
function keepArrayLimit(array: string | undefined, before: Resources, after: EditedRun): void {
  if (array === undefined || after.demands === before) return;
  const resource = `${ARRAY_RESOURCE_PREFIX}${array}`;
  const old = before.get(resource);
  if (old === undefined) return;
  after.demands = sortResources(new Map([...after.demands, [resource, old]]));
  after.fields.resources = formatResources(after.demands);
}

/** Fields shown first, in this order, when they change; any other after them. */
const SHOWN_FIRST = ['priority', 'resources', 'gpus', 'timeLimit', 'labels'];

/**
 * Fields of a run's data that differ, as users see them; `known`: the
 * demands before and after as parsed already (the typed text after too).
 */
export function diffFields(before: Fields, after: Fields, known: { before?: KnownParts; after?: KnownParts } = {}): FieldChange[] {
  const changes: FieldChange[] = [];
  const names = [...new Set([...SHOWN_FIRST, ...Object.keys(before), ...Object.keys(after)])].filter(
    (name) => name !== 'signature' && name !== 'requires',
  );
  for (const name of names) {
    if (before[name] === after[name]) continue;
    if (name === 'resources') {
      const shown = (fields: Fields, parts: KnownParts | undefined) =>
        decodeRun({ resources: fields.resources ?? '', ...(fields.requires === undefined ? {} : { requires: fields.requires }) }, parts).run.requires;
      changes.push({ field: name, from: shown(before, known.before) || 'none', to: shown(after, known.after) || 'none' });
    } else if (name === 'labels') {
      const shown = (fields: Fields) => Object.entries(labelsOf(fields)).map(([key, value]) => `${key}=${value}`).join(' ');
      if (shown(before) !== shown(after)) changes.push({ field: name, from: shown(before) || 'none', to: shown(after) || 'none' });
    } else if (name === 'timeLimit') {
      const shown = (fields: Fields) => (fields.timeLimit === undefined ? 'none' : formatTimeLimit(Number(fields.timeLimit)));
      changes.push({ field: name, from: shown(before), to: shown(after) });
    } else {
      changes.push({ field: name, from: before[name] ?? 'none', to: after[name] ?? 'none' });
    }
  }
  return changes;
}
