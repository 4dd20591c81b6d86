/**
 * How a run is stored, and read back into a RunRecord (run-record.ts).
 *
 * A run is a BullMQ job. What it is (command, demands, ...) is the job's
 * `data`, JSON; what happens to it (status, worker, claim epoch, ...) are
 * fields of the job hash beside BullMQ's own. In code a run is one flat
 * record of strings (`runFields`): the job hash with its data's fields
 * spread over it, as they were signed.
 */
import { formatHumanResources, parseResourceSpecs, parseStoredResources, resourcesToJson, sameResources, type Resources } from '../resources/spec.js';
import { withoutArrayLimits } from './array-limit.js';
import type { StoredOutputFiles } from './output-files.js';
import { LIFECYCLE_DATA_KEYS, type Dependency, type RetryPolicy } from './parked.js';
import type { RunRecord, RunStatus } from './run-record.js';

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
  /** Time limit in ms, if any. */
  timeLimit?: number;
  /** `SIGUSR1@2m`, if given. */
  timeSignal?: string;
  priority: number;
  signature?: string;
  notify?: string;
  /** Lifecycle options (parked.ts): hold, begin, delay, after, keepIfDependencyFails, retry. */
  hold?: boolean;
  begin?: number;
  delay?: number;
  after?: Dependency[];
  keepIfDependencyFails?: boolean;
  retry?: RetryPolicy;
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
  if (fields.timeLimit !== undefined) data.timeLimit = Number(fields.timeLimit);
  if (fields.timeSignal !== undefined) data.timeSignal = fields.timeSignal;
  if (fields.signature !== undefined) data.signature = fields.signature;
  if (fields.notify !== undefined) data.notify = fields.notify;
  if (fields.lifecycle !== undefined) Object.assign(data, parseJson<Record<string, unknown>>(fields.lifecycle, {}));
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
  if (data.timeLimit !== undefined) fields.timeLimit = String(data.timeLimit);
  if (data.timeSignal !== undefined) fields.timeSignal = String(data.timeSignal);
  if (data.signature !== undefined) fields.signature = String(data.signature);
  if (data.notify !== undefined) fields.notify = String(data.notify);
  const lifecycle: Record<string, unknown> = {};
  for (const key of LIFECYCLE_DATA_KEYS) if (data[key] !== undefined) lifecycle[key] = data[key];
  if (Object.keys(lifecycle).length > 0) fields.lifecycle = JSON.stringify(lifecycle);
  if (data.arrayIndex !== undefined) fields.arrayIndex = String(data.arrayIndex);
  if (data.params !== undefined) fields.params = JSON.stringify(data.params);
  if (data.output !== undefined) fields.output = JSON.stringify(data.output);
  return fields;
}

/**
 * A run's job data as fitq wrote it: its `runData`, which BullMQ never
 * writes (job.updateData rewrites `data` only, and reconcileRuns puts that
 * back), else `data` for a run staged before fitq kept both.
 */
export function fitqRunData(hash: { readonly runData?: string | null; readonly data?: string | null }): string | undefined {
  return hash.runData ?? hash.data ?? undefined;
}

/** Whether BullMQ rewrote a run's `data` (job.updateData) since fitq wrote it: reconcileRuns puts it back. */
export function bullDataAltered(hash: Readonly<Record<string, string>>): boolean {
  return hash.runData !== undefined && hash.data !== hash.runData;
}

/** A run as one flat record: its job hash (as HGETALL gives it) with its data's fields (as fitq wrote them). */
export function runFields(runId: string, hash: Readonly<Record<string, string>>): Record<string, string> {
  return { ...hash, ...dataFields(fitqRunData(hash)), id: runId };
}

/** Demands of a stored run, exact. */
export function runDemands(fields: Record<string, string>): Resources {
  return parseStoredResources(fields.resources);
}

/** Demands as people read them, in human units ("gpu=1 mem=8G"): never an array's limit (withoutArrayLimits). */
export function formatDemands(demands: Resources): string {
  return formatHumanResources(withoutArrayLimits(demands));
}

/**
 * The demands as typed (the `requires` field), if they still say exactly what
 * `resources` holds: the typed text is not signed, so an altered one is never
 * shown. Otherwise the amounts in human units (formatDemands).
 */
function requiresText(fields: Record<string, string>, stored: Resources): string {
  // An array's limit is a demand of its own pool resource, not one typed: not shown.
  const demands = withoutArrayLimits(stored);
  const typed = fields.requires;
  if (typed) {
    try {
      if (sameResources(parseResourceSpecs([typed]), demands)) return typed;
    } catch {
      // not a spec: fall through to the stored amounts
    }
  }
  return formatDemands(demands);
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
  const lifecycle = parseJson<Partial<RunData>>(fields.lifecycle, {});
  const stored = (fields.status ?? 'staged') as RunStatus;
  const record: RunRecord = {
    id: fields.id ?? '',
    status: stored === 'staged' && fields.held === '1' ? 'held' : stored,
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
    notify: fields.notify || undefined,
    // Once claimed, the limit its worker applies (the claim's `runLimit`).
    timeLimit: optionalNumber(fields.status === 'staged' ? fields.timeLimit : fields.runLimit || fields.timeLimit),
    deadline: fields.status === 'running' ? optionalNumber(fields.deadline) : undefined,
    timeSignal: fields.timeSignal || undefined,
    beginAt: optionalNumber(fields.beginAt),
    after: Array.isArray(lifecycle.after) ? lifecycle.after : undefined,
    waitingForDependencies: fields.waitDeps === '1' ? true : undefined,
    dependencyNever: fields.depsNever || undefined,
    keepIfDependencyFails: lifecycle.keepIfDependencyFails === true ? true : undefined,
    retryOnFailure: lifecycle.retry && typeof lifecycle.retry === 'object' ? lifecycle.retry : undefined,
    failures: optionalNumber(fields.failures),
    restarted: optionalNumber(fields.restarted),
    canceledFor: fields.canceledFor || undefined,
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
