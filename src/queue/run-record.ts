/**
 * The run record: how a run is stored (a Redis hash of plain fields) and how
 * it is shown (RunRecord, the JSON of `fitq runs --json`).
 */
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
}

/** Which runs to list, cancel or remove: every given condition must hold. */
export interface RunFilter {
  /** Any of these statuses (none given: any status). */
  statuses?: readonly RunStatus[];
  /** Every one of these labels, with exactly this value. */
  labels?: Readonly<Record<string, string>>;
}

export function matchesFilter(run: RunRecord, filter: RunFilter): boolean {
  if (filter.statuses && filter.statuses.length > 0 && !filter.statuses.includes(run.status)) return false;
  return Object.entries(filter.labels ?? {}).every(([key, value]) => Object.hasOwn(run.labels, key) && run.labels[key] === value);
}

export function isEnded(run: RunRecord): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(run.status);
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
function requiresText(fields: Record<string, string>, demands: Resources): string {
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

/** Builds a RunRecord from the run's hash as HGETALL returns it. */
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
    stagedAt: Number(fields.stagedAt ?? 0),
    seq: Number(fields.seq ?? 0),
  };
  const optional = {
    startedAt: optionalNumber(fields.startedAt),
    endedAt: optionalNumber(fields.endedAt),
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
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (record as unknown as Record<string, unknown>)[key] = value;
  }
  return record;
}
