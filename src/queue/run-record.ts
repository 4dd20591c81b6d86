/**
 * The run record: how a run is stored (a Redis hash of plain fields) and how
 * it is shown (RunRecord, the JSON of `fitq runs --json`).
 */
import { parseStoredResources, resourcesToJson, type Resources } from '../resources/spec.js';

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
  /** The same demands, exact: "gpu=1 mem=8000000000" (empty for none). */
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

export function isEnded(run: RunRecord): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(run.status);
}

/** Demands of a stored run, exact. */
export function runDemands(fields: Record<string, string>): Resources {
  return parseStoredResources(fields.resources);
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
  const record: RunRecord = {
    id: fields.id ?? '',
    status: (fields.status ?? 'staged') as RunStatus,
    command: parseJson<string[]>(fields.command, []),
    shell: fields.shell === '1',
    cwd: fields.cwd ?? '',
    env: parseJson<Record<string, string>>(fields.env, {}),
    resources: resourcesToJson(runDemands(fields)),
    requires: fields.resources ?? '',
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
