/**
 * The run record: how a run is stored and how it is shown (RunRecord, the
 * JSON of `fitq runs --json`).
 *
 * A run is a BullMQ job. What it is (command, demands, ...) is the job's
 * `data`, JSON; what happens to it (status, worker, claim epoch, ...) are
 * fields of the job hash beside BullMQ's own. In code a run is one flat
 * record of strings (`runFields`): the job hash with its data's fields
 * spread over it, as they were signed.
 */
import type { StoredOutputFiles } from './output-files.js';
import { ARRAY_RESOURCE_PREFIX } from './sweep.js';
import { formatHumanResources, parseResourceSpecs, parseStoredResources, resourcesToJson, sameResources, type Resources } from '../resources/spec.js';

/** `rejected`: a worker that requires signed runs refused it (unsigned or altered); it never started. */
export const RUN_STATUSES = ['staged', 'running', 'completed', 'failed', 'canceled', 'lost', 'rejected'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ENDED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'canceled', 'lost', 'rejected'];

export interface RunRecord {
  id: string;
  status: RunStatus;
  /** The argv to run; with `shell`, one string run by `sh -c`. */
  command: string[];
  shell: boolean;
  cwd: string;
  /** Variables added to the worker's environment. */
  env: Record<string, string>;
  /** Demanded amounts, by resource name. */
  resources: Record<string, number>;
  /**
   * The same demands as text: as typed when staged ("gpu=1 mem=8G"), else in
   * human units; empty for none.
   */
  requires: string;
  priority: number;
  labels: Record<string, string>;
  /** Epoch ms. */
  stagedAt: number;
  startedAt?: number;
  endedAt?: number;
  worker?: string;
  exitCode?: number;
  signal?: string;
  /** Why the run waits (staged) or why it ended the way it did. */
  reason?: string;
  /** GPU devices assigned to the run (its CUDA_VISIBLE_DEVICES), if any. */
  devices?: number[];
  /** GPU devices the run is pinned to (`fitq stage --gpus`), if any. */
  pinnedGpus?: number[];
  /** Times it may be re-staged when its worker dies under it. */
  retries?: number;
  /** Times it was re-staged, and why the last time. */
  restaged?: number;
  restagedReason?: string;
  /** How many times the run was claimed; fences writers of older claims. */
  epoch?: number;
  seq: number;
  /** The array it is part of (`fitq stage --array/--param`), its index there and its parameters. */
  array?: string;
  arrayIndex?: number;
  params?: Record<string, string>;
  /** Files the worker also writes its output to (`fitq stage --output/--error`), absolute. */
  output?: StoredOutputFiles;
}

/** Which runs to list, cancel or remove: every given condition must hold. */
export interface RunFilter {
  /** Any of these statuses (none given: any status). */
  statuses?: readonly RunStatus[];
  /** Every one of these labels, with exactly this value. */
  labels?: Readonly<Record<string, string>>;
  /** Runs of this array (its full id). */
  array?: string;
}

export function matchesFilter(run: RunRecord, filter: RunFilter): boolean {
  if (filter.statuses && filter.statuses.length > 0 && !filter.statuses.includes(run.status)) return false;
  if (filter.array !== undefined && run.array !== filter.array) return false;
  return Object.entries(filter.labels ?? {}).every(([key, value]) => Object.hasOwn(run.labels, key) && run.labels[key] === value);
}

export function isEnded(run: RunRecord): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(run.status);
}

/** What a run is, as its job's `data` holds it. */
export interface RunData {
  command: string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  /** Exact demands, `name=amount` sorted by name ("cpu=1 mem=500000000"). */
  resources: string;
  /** The demands as typed ("mem=0.5G cpu=1"), if typed. */
  requires?: string;
  /** GPU devices it is pinned to ("0,1"), if any. */
  gpus?: string;
  retries?: number;
  priority: number;
  signature?: string;
  /** Its index in its array, and its parameters (the array's id is the job's `array` field). */
  arrayIndex?: number;
  params?: Record<string, string>;
  output?: StoredOutputFiles;
}

/** The job data (JSON text) of a run about to be staged, from its string fields. */
export function runDataJson(fields: Readonly<Record<string, string>>, priority: number): string {
  const data: RunData = {
    command: parseJson<string[]>(fields.command, []),
    shell: fields.shell === '1',
    cwd: fields.cwd ?? '',
    env: parseJson<Record<string, string>>(fields.env, {}),
    labels: parseJson<Record<string, string>>(fields.labels, {}),
    resources: fields.resources ?? '',
    priority,
  };
  if (fields.requires !== undefined) data.requires = fields.requires;
  if (fields.gpus !== undefined) data.gpus = fields.gpus;
  if (fields.retries !== undefined) data.retries = Number(fields.retries);
  if (fields.signature !== undefined) data.signature = fields.signature;
  if (fields.arrayIndex !== undefined) data.arrayIndex = Number(fields.arrayIndex);
  if (fields.params !== undefined) data.params = parseJson<Record<string, string>>(fields.params, {});
  if (fields.output !== undefined) data.output = parseJson<StoredOutputFiles>(fields.output, { stdout: '' });
  return JSON.stringify(data);
}

/**
 * The string fields of a run's job data, exactly as they were staged (and
 * signed); none for data that is not a fitq run's.
 */
export function dataFields(dataJson: string | undefined): Record<string, string> {
  const data = parseJson<Partial<RunData> | null>(dataJson, null);
  if (data === null || typeof data !== 'object' || !Array.isArray(data.command)) return {};
  const fields: Record<string, string> = {
    command: JSON.stringify(data.command),
    shell: data.shell === true ? '1' : '0',
    cwd: String(data.cwd ?? ''),
    env: JSON.stringify(data.env ?? {}),
    labels: JSON.stringify(data.labels ?? {}),
    resources: String(data.resources ?? ''),
    priority: String(data.priority ?? 0),
  };
  if (data.requires !== undefined) fields.requires = String(data.requires);
  if (data.gpus !== undefined) fields.gpus = String(data.gpus);
  if (data.retries !== undefined) fields.retries = String(data.retries);
  if (data.signature !== undefined) fields.signature = String(data.signature);
  if (data.arrayIndex !== undefined) fields.arrayIndex = String(data.arrayIndex);
  if (data.params !== undefined) fields.params = JSON.stringify(data.params);
  if (data.output !== undefined) fields.output = JSON.stringify(data.output);
  return fields;
}

/** A run as one flat record: its job hash (as HGETALL gives it) with its data's fields. */
export function runFields(runId: string, hash: Readonly<Record<string, string>>): Record<string, string> {
  return { ...hash, ...dataFields(hash.data), id: runId };
}

/** Demands of a stored run, exact. */
export function runDemands(fields: Record<string, string>): Resources {
  return parseStoredResources(fields.resources);
}

/**
 * The demands as typed (the `requires` field), if they still say exactly what
 * `resources` holds: the typed text is not signed, so an altered one is never
 * shown. Otherwise the amounts in human units.
 */
function requiresText(fields: Record<string, string>, stored: Resources): string {
  // An array's limit is a demand of its own pool resource, not one typed: not shown.
  const demands = fields.array ? new Map([...stored].filter(([name]) => name !== `${ARRAY_RESOURCE_PREFIX}${fields.array}`)) : stored;
  const typed = fields.requires;
  if (typed) {
    try {
      if (sameResources(parseResourceSpecs([typed]), demands)) return typed;
    } catch {
      // not a spec: fall through to the stored amounts
    }
  }
  return formatHumanResources(demands);
}

function optionalNumber(value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}

function parseJson<T>(value: string | undefined, fallback: T): T {
  if (value === undefined || value === '') return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

function deviceList(value: string | undefined): number[] | undefined {
  return value ? value.split(',').map(Number) : undefined;
}

/** Builds a RunRecord from a run's flat record (runFields). */
export function parseRunFields(fields: Record<string, string>): RunRecord {
  const demands = runDemands(fields);
  const record: RunRecord = {
    id: fields.id ?? '',
    status: (fields.status ?? 'staged') as RunStatus,
    command: parseJson<string[]>(fields.command, []),
    shell: fields.shell === '1',
    cwd: fields.cwd ?? '',
    env: parseJson<Record<string, string>>(fields.env, {}),
    resources: resourcesToJson(demands),
    requires: requiresText(fields, demands),
    priority: Number(fields.priority ?? 0),
    labels: parseJson<Record<string, string>>(fields.labels, {}),
    stagedAt: Number(fields.timestamp ?? 0),
    seq: Number(fields.seq ?? 0),
  };
  const optional = {
    startedAt: optionalNumber(fields.processedOn),
    endedAt: optionalNumber(fields.finishedOn),
    worker: fields.worker || undefined,
    exitCode: optionalNumber(fields.exitCode),
    signal: fields.signal || undefined,
    reason: fields.reason || undefined,
    epoch: optionalNumber(fields.epoch),
    devices: deviceList(fields.devices),
    pinnedGpus: deviceList(fields.gpus),
    retries: optionalNumber(fields.retries),
    restaged: optionalNumber(fields.restaged),
    restagedReason: fields.restagedReason || undefined,
    array: fields.array || undefined,
    arrayIndex: optionalNumber(fields.arrayIndex),
    params: fields.params ? parseJson<Record<string, string> | undefined>(fields.params, undefined) : undefined,
    output: fields.output ? parseJson<StoredOutputFiles | undefined>(fields.output, undefined) : undefined,
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (record as unknown as Record<string, unknown>)[key] = value;
  }
  return record;
}
