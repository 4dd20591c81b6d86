/**
 * Editing staged runs (`fitq update`, FitqClient.updateRuns): priority,
 * demands, labels, pinned GPUs of runs that are staged or held, with the
 * checks staging makes (stage.ts), re-signed by the editor when signed.
 *
 * Every run is read and its edit checked first: an unknown id, a bad value,
 * a run that is not staged or held, a signed run without the secret refuse
 * the whole request (nothing is written). Then one script call applies the
 * edits (updateRuns-1.lua), each run on its own and only if it is still
 * staged or held with the data the edit was made from: a run is claimed
 * either with its old demands or staged with its new ones. A run whose data
 * changed meanwhile (another edit) is read and edited again; one claimed,
 * ended or removed meanwhile is reported as refused, the others are updated.
 */
import type { Redis } from 'ioredis';
import { UsageError } from '../errors.js';
import { parseDeviceList } from '../resources/devices.js';
import { formatHumanAmount } from '../resources/amount.js';
import {
  formatResources,
  parseResourceSpecs,
  parseStoredResources,
  sameResources,
  sortResources,
  specParts,
  toResources,
  type ResourceInput,
  type Resources,
} from '../resources/spec.js';
import { canonicalRunPayload, signRuns, verifyRun } from '../security/signing.js';
import type { NamespaceKeys } from './keys.js';
import { quote } from '../text/quote.js';
import { validateRunId } from './names.js';
import { execPipeline } from './pipeline.js';
import { dataFields, fitqRunData, parseRunFields, runDataJson, runFields, type RunRecord } from './run-record.js';
import { refusalOf } from './script-codes.js';
import type { Scripts, UpdateScriptRun } from './scripts.js';
import { formatTimeLimit } from '../units/duration.js';
import { parsePinnedGpus, shapeOf, timeFields, validateLabels, validatePriority } from './stage.js';
import { ARRAY_RESOURCE_PREFIX } from './sweep.js';

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

/** A run's data as its string fields (run-record.ts, dataFields), edited in place. */
type Fields = Record<string, string>;

interface Edit<K extends keyof RunChanges> {
  /** The CLI flag that asks for it, named when no change is given. */
  flag: string;
  /** Writes the change into a run's fields, checked as staging checks it; throws UsageError. */
  apply(fields: Fields, value: Exclude<RunChanges[K], undefined>): void;
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
    apply: (fields, priority) => {
      fields.priority = String(validatePriority(priority));
    },
  },
  resources: {
    flag: '-r',
    apply: (fields, resources) => {
      const demands = mergeDemands(fields, resources);
      fields.resources = demands.resources;
      if (demands.requires === undefined) delete fields.requires;
      else fields.requires = demands.requires;
    },
  },
  labels: {
    flag: '--label',
    apply: (fields, labels) => {
      fields.labels = validateLabels({ ...labelsOf(fields), ...labels });
    },
  },
  unlabel: {
    flag: '--unlabel',
    apply: (fields, keys) => {
      const labels = labelsOf(fields);
      for (const key of keys) delete labels[key];
      fields.labels = validateLabels(labels);
    },
  },
  gpus: {
    flag: '--gpus',
    apply: (fields, gpus) => {
      if (gpus === null) delete fields.gpus;
      else fields.gpus = parseDeviceList(gpus, '--gpus').join(',');
    },
  },
  timeLimit: {
    flag: '--time-limit',
    apply: (fields, timeLimit) => {
      delete fields.timeLimit;
      const signal = fields.timeSignal;
      delete fields.timeSignal;
      if (timeLimit !== null) Object.assign(fields, timeFields(timeLimit, signal));
    },
  },
};

const EDIT_NAMES = Object.keys(EDITS) as (keyof RunChanges)[];

/** Times a run whose data changed between reading and writing it (another edit) is read and edited again. */
const EDIT_ATTEMPTS = 5;

/** Runs edited per script call (a call of this many holds Redis a few ms), and the most bytes of job data one call carries. */
const UPDATE_CHUNK = 500;
const UPDATE_CHUNK_BYTES = 16 * 1024 * 1024;

/** One field that changes, as users see it. */
export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

/** What updateRuns did to one run. */
export interface UpdateResult {
  id: string;
  /**
   * `updated` (with `dryRun`: would be); `unchanged`: it already is so;
   * `refused`: claimed, ended or removed between the check and the write
   * (`reason` says which), left as it is.
   */
  outcome: 'updated' | 'unchanged' | 'refused';
  /** What changes, in fields of the run's data (`resources` shown as typed or in human units). */
  changes: FieldChange[];
  /** The run as it is now (with `dryRun`: as it would be); absent for a refused run. */
  run?: RunRecord;
  reason?: string;
}

export interface UpdateOptions {
  /** Check and show what would change; write nothing. */
  dryRun?: boolean;
}

/** What updateRuns needs of its client. */
export interface UpdateContext {
  redis: Redis;
  keys: NamespaceKeys;
  scripts: Scripts;
  /** The editor's secret, to re-sign signed runs with. */
  secret: Uint8Array | undefined;
}

/** Statuses of the runs that may be edited: staged (waiting to start) or held. */
const EDITABLE_STATUSES: readonly string[] = ['staged', 'held'];

/** A run as read for editing: its job hash (with `data`), and its edit. */
interface PlannedEdit {
  id: string;
  hash: Record<string, string>;
  changes: FieldChange[];
  script: UpdateScriptRun;
  run: RunRecord;
}

/**
 * Edits staged (and held) runs; see the module's comment for what is
 * checked first and how runs racing a claim or another edit fare. Returns a
 * result per run, in the order given (each id once).
 */
export async function updateRuns(
  ctx: UpdateContext,
  runIds: readonly string[],
  changes: RunChanges,
  options: UpdateOptions = {},
): Promise<UpdateResult[]> {
  const ids = [...new Set(runIds)];
  ids.forEach(validateRunId);
  if (ids.length === 0) throw new UsageError('name the runs to update');
  checkChanges(changes);
  const results = new Map<string, UpdateResult>();
  let pending = await planEdits(ctx, ids, changes, true);
  for (let attempt = 1; ; attempt++) {
    for (const plan of pending) {
      if (plan.changes.length === 0) results.set(plan.id, { id: plan.id, outcome: 'unchanged', changes: [], run: plan.run });
    }
    const toWrite = pending.filter((plan) => plan.changes.length > 0);
    if (options.dryRun) {
      for (const plan of toWrite) results.set(plan.id, { id: plan.id, outcome: 'updated', changes: plan.changes, run: plan.run });
      break;
    }
    const again: string[] = [];
    for (const chunk of chunks(toWrite)) {
      const outcomes = await ctx.scripts.updateRuns(chunk.map((plan) => plan.script));
      outcomes.forEach((reply, j) => {
        const plan = chunk[j]!;
        if (reply.outcome === 'updated') results.set(plan.id, { id: plan.id, outcome: 'updated', changes: plan.changes, run: plan.run });
        else if (reply.outcome === 'changed' && attempt < EDIT_ATTEMPTS) again.push(plan.id);
        else results.set(plan.id, { id: plan.id, outcome: 'refused', changes: plan.changes, reason: refusedReason(plan.id, reply) });
      });
    }
    if (again.length === 0) break;
    // Edited meanwhile: edited again from what it is now; one gone or claimed meanwhile is refused.
    pending = await planEdits(ctx, again, changes, false, results);
  }
  return ids.map((id) => results.get(id)!);
}

/** Edits in script calls of at most UPDATE_CHUNK runs and UPDATE_CHUNK_BYTES of data (one run at least). */
function chunks(plans: readonly PlannedEdit[]): PlannedEdit[][] {
  const result: PlannedEdit[][] = [];
  let current: PlannedEdit[] = [];
  let size = 0;
  for (const plan of plans) {
    const bytes = Buffer.byteLength(plan.script.expectedData) + Buffer.byteLength(plan.script.data);
    if (current.length > 0 && (current.length === UPDATE_CHUNK || size + bytes > UPDATE_CHUNK_BYTES)) {
      result.push(current);
      current = [];
      size = 0;
    }
    current.push(plan);
    size += bytes;
  }
  if (current.length > 0) result.push(current);
  return result;
}

function refusedReason(id: string, reply: Awaited<ReturnType<Scripts['updateRuns']>>[number]): string {
  if (reply.outcome === 'status') return `run ${quote(id)} is ${reply.status} (it changed meanwhile): not updated`;
  if (reply.outcome === 'gone') return `run ${quote(id)} was removed meanwhile: not updated`;
  return `run ${quote(id)} kept changing meanwhile: not updated`;
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
 * Reads the runs and makes each one's edit. With `strict` (the first
 * reading), a run that cannot be edited refuses the whole request; after
 * (runs edited meanwhile), such a run is recorded in `results` as refused.
 */
async function planEdits(
  ctx: UpdateContext,
  ids: readonly string[],
  changes: RunChanges,
  strict: boolean,
  results?: Map<string, UpdateResult>,
): Promise<PlannedEdit[]> {
  const hashes = await readRuns(ctx, ids);
  const plans: PlannedEdit[] = [];
  for (const [i, id] of ids.entries()) {
    const hash = hashes[i];
    const refuse = (reason: string) => {
      if (strict) throw new UsageError(reason);
      results?.set(id, { id, outcome: 'refused', changes: [], reason });
    };
    if (hash === undefined) {
      if (strict) throw refusalOf('unknownRun', id);
      refuse(`run ${quote(id)} was removed meanwhile: not updated`);
    } else if (!EDITABLE_STATUSES.includes(hash.status ?? '')) {
      refuse(`run ${quote(id)} is ${hash.status}: only staged or held runs can be updated`);
    } else {
      try {
        plans.push(planEdit(ctx, id, hash, changes));
      } catch (error) {
        // (Edited meanwhile into a run this edit no longer suits, e.g. pinned anew.)
        if (strict || !(error instanceof UsageError)) throw error;
        refuse(`${error.message} (it changed meanwhile): not updated`);
      }
    }
  }
  if (strict && changes.unlabel !== undefined) {
    const had = new Set(plans.flatMap((plan) => Object.keys(labelsOf(dataFields(fitqRunData(plan.hash))))));
    const missing = changes.unlabel.find((key) => !had.has(key));
    if (missing !== undefined) throw new UsageError(`--unlabel ${quote(missing)}: no run given has that label`);
  }
  return plans;
}

/** The job hashes of runs (undefined: no such run, or of a batch not committed), in one round trip. */
async function readRuns(ctx: UpdateContext, ids: readonly string[]): Promise<(Record<string, string> | undefined)[]> {
  const pipeline = ctx.redis.pipeline();
  pipeline.hgetall(ctx.keys.batches);
  for (const id of ids) pipeline.hgetall(ctx.keys.run(id));
  const [batchReply, ...replies] = await execPipeline(pipeline, { wrongTypeAsNull: true });
  const open = new Set(Object.keys((batchReply ?? {}) as Record<string, string>));
  return replies.map((reply) => {
    const hash = (reply ?? {}) as Record<string, string>;
    return !hash.status || (hash.batch !== undefined && open.has(hash.batch)) ? undefined : hash;
  });
}

/** One run's edit: its new data (re-signed if it was signed), shape and priority, and what changes. */
function planEdit(ctx: UpdateContext, id: string, hash: Record<string, string>, changes: RunChanges): PlannedEdit {
  const before = dataFields(fitqRunData(hash));
  if (before.command === undefined) throw new UsageError(`run ${quote(id)} holds no run data fitq can read: not updated`);
  const after: Fields = { ...before };
  delete after.signature;
  for (const name of EDIT_NAMES) {
    const value = changes[name];
    if (value !== undefined) (EDITS[name] as Edit<typeof name>).apply(after, value as never);
  }
  keepArrayLimit(hash.array, before, after);
  checkRun(id, after);
  const priority = Number(after.priority);
  const signed = before.signature === undefined ? after : signedAnew(ctx, id, before, after, priority);
  const data = runDataJson(signed, priority);
  const fieldChanges = diffFields(before, after);
  return {
    id,
    hash,
    changes: fieldChanges,
    run: parseRunFields(runFields(id, { ...hash, data, runData: data })),
    script: {
      id,
      expectedData: fitqRunData(hash) ?? '',
      data,
      shape: shapeOfFields(after),
      priority,
      changes: fieldChanges.map((change) => change.field).join(','),
    },
  };
}

/** The checks that take several fields of an edited run together. */
function checkRun(id: string, fields: Fields): void {
  if (fields.gpus === undefined) return;
  try {
    parsePinnedGpus(fields.gpus, parseStoredResources(fields.resources));
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`run ${quote(id)}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** The staged-index shape of a run's fields, as staging computes it (stage.ts, shapeOf). */
export function shapeOfFields(fields: Fields): string {
  const timeLimit = fields.timeLimit ? Number(fields.timeLimit) : undefined;
  return shapeOf(parseStoredResources(fields.resources), fields.gpus ? fields.gpus.split(',').map(Number) : [], timeLimit);
}

/**
 * The edited fields of a signed run: with its signature as it is when no
 * signed field changed (labels are not signed), else signed anew.
 */
function signedAnew(ctx: UpdateContext, id: string, before: Fields, after: Fields, priority: number): Fields {
  const payload = (fields: Fields) => canonicalRunPayload({ namespace: ctx.keys.base, runId: id, fields });
  if (payload(before) === payload(after)) return { ...after, signature: before.signature! };
  return resign(ctx, id, before, after, priority);
}

/**
 * The edited fields of a signed run, signed anew with the editor's secret,
 * exactly as staging signs (signing.ts, signRuns). Refused without the
 * secret, or when the run's signature does not match it: an editor never
 * signs what someone else altered.
 */
function resign(ctx: UpdateContext, id: string, before: Fields, after: Fields, priority: number): Fields {
  if (ctx.secret === undefined) {
    throw new UsageError(`run ${quote(id)} is signed: give the secret to re-sign it (--secret-file, FITQ_SECRET_FILE or FITQ_SECRET)`);
  }
  const verdict = verifyRun(ctx.secret, { namespace: ctx.keys.base, runId: id, fields: before });
  if (!verdict.ok) {
    throw new UsageError(
      `run ${quote(id)} is signed, but not with this secret (or it was altered): it is not re-signed (${verdict.reason.replace(/^rejected: /, '')})`,
    );
  }
  return signRuns([{ id, priority, fields: after }], ctx.keys.base, ctx.secret)[0]!.fields;
}

function labelsOf(fields: Fields): Record<string, string> {
  try {
    const labels = JSON.parse(fields.labels ?? '{}') as unknown;
    return typeof labels === 'object' && labels !== null && !Array.isArray(labels) ? { ...(labels as Record<string, string>) } : {};
  } catch {
    return {};
  }
}

/**
 * A run's demands changed by an edit: the demands it names take their new
 * amounts (0 removes one), the others stay. Their typed text (`requires`,
 * what `fitq runs` shows) keeps each demand where it was, as it was typed,
 * a changed one as the edit typed it, and adds new ones at the end; a
 * demand never typed (staged from amounts) is written in human units.
 */
function mergeDemands(fields: Fields, input: ResourceInput): { resources: string; requires?: string } {
  const named = toResources(input, { keepZero: true });
  const stored = parseStoredResources(fields.resources);
  const demands = new Map(stored);
  for (const [name, micros] of named) {
    if (micros === 0n) demands.delete(name);
    else demands.set(name, micros);
  }
  const newParts = typedParts(input, named);
  const parts: string[] = [];
  for (const [name, part] of typedDemandParts(fields.requires, stored)) {
    if (!named.has(name)) parts.push(part);
    else if (named.get(name)! > 0n) parts.push(newParts.get(name)!);
  }
  for (const [name, micros] of named) if (micros > 0n && !stored.has(name)) parts.push(newParts.get(name)!);
  return { resources: formatResources(sortResources(demands)), ...(parts.length === 0 ? {} : { requires: parts.join(' ') }) };
}

const nameOfPart = (part: string): string => part.slice(0, part.indexOf('='));
const humanPart = (name: string, micros: bigint): string => `${name}=${formatHumanAmount(micros)}`;

/** The parts of an edit's demands by name: as typed, or in human units for a map of amounts. */
function typedParts(input: ResourceInput, named: Resources): Map<string, string> {
  if (typeof input === 'string' || Array.isArray(input)) {
    const specs: readonly string[] = typeof input === 'string' ? [input] : (input as readonly string[]);
    return new Map(specs.flatMap(specParts).map((part) => [nameOfPart(part), part]));
  }
  return new Map([...named].map(([name, micros]) => [name, humanPart(name, micros)]));
}

/**
 * A run's demands as parts by name, in the order they were typed when the
 * typed text still says exactly what it demands (an array's limit, never
 * typed, aside), else in human units; those never typed follow.
 */
function typedDemandParts(typed: string | undefined, stored: Resources): [string, string][] {
  const own = new Map([...stored].filter(([name]) => !name.startsWith(ARRAY_RESOURCE_PREFIX)));
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
function keepArrayLimit(array: string | undefined, before: Fields, after: Fields): void {
  if (array === undefined || after.resources === before.resources) return;
  const resource = `${ARRAY_RESOURCE_PREFIX}${array}`;
  const old = parseStoredResources(before.resources ?? '').get(resource);
  if (old === undefined) return;
  const demands = parseStoredResources(after.resources ?? '');
  after.resources = formatResources(sortResources(new Map([...demands, [resource, old]])));
}

/** Fields shown first, in this order, when they change; any other after them. */
const SHOWN_FIRST = ['priority', 'resources', 'gpus', 'timeLimit', 'labels'];

/** Fields of a run's data that differ, as users see them. */
function diffFields(before: Fields, after: Fields): FieldChange[] {
  const changes: FieldChange[] = [];
  const names = [...new Set([...SHOWN_FIRST, ...Object.keys(before), ...Object.keys(after)])].filter(
    (name) => name !== 'signature' && name !== 'requires',
  );
  for (const name of names) {
    if (before[name] === after[name]) continue;
    if (name === 'resources') {
      const shown = (fields: Fields) => parseRunFields({ resources: fields.resources ?? '', ...(fields.requires === undefined ? {} : { requires: fields.requires }) }).requires;
      changes.push({ field: name, from: shown(before) || 'none', to: shown(after) || 'none' });
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
