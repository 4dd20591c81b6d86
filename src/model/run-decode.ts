/**
 * A stored run as fitq shows it: its flat fields (the job hash with its
 * data's fields over it, runFields) decoded into a RunRecord, each field as
 * its kind in the table (run-fields.ts) reads, its demands parsed once.
 */
import { parseRequest } from '../security/request-signature.js';
import { formatHumanResources, parseResourceSpecs, parseStoredResources, resourcesToJson, sameResources, type Demands, type Resources } from '../resources/spec.js';
import { withoutArrayLimits } from '../resources/array-limit.js';
import { parseJson, type FlatFields } from './run-codec.js';
import { RUN_FIELDS, type RunFieldName } from './run-fields.js';
import type { Dependency, RetryPolicy } from './parked.js';
import type { RunRecord, RunStatus } from './run-record.js';
import { decodeRunUsage } from './run-usage.js';

/** A RunRecord and the exact demands it was decoded with. */
export interface DecodedRun {
  run: RunRecord;
  demands: Resources;
}

/** What the caller already holds of a run, so it is not parsed again. */
export interface KnownParts {
  /** Its exact demands, as its `resources` field says them. */
  demands?: Resources | undefined;
  /** The demands it was staged with, as parsed where they were given: their `requires` text needs no parse. */
  typed?: Demands | undefined;
}

/** A field's text read as its kind: absent, empty or (for a flag) not set reads as undefined. */
function readField(name: RunFieldName, text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  switch (RUN_FIELDS[name].kind) {
    case 'number':
      return Number(text);
    case 'flag':
      return text === '1' ? true : undefined;
    case 'json':
      return parseJson<unknown>(text, undefined);
    case 'list':
      return text.split(',').map(Number);
    default:
      return text;
  }
}

/** A stored run's lifecycle options (parked.ts), as its `lifecycle` field holds them. */
interface StoredLifecycle {
  after?: Dependency[];
  keepIfDependencyFails?: boolean;
  retry?: RetryPolicy;
}

/**
 * The RunRecord's optional properties, in the order `fitq runs --json` shows
 * them: each read from one field as its kind reads it, or made from several.
 * The others (id, status, command, demands, ...) every record has.
 */
const OPTIONAL: readonly (readonly [keyof RunRecord, RunFieldName | ((fields: FlatFields, lifecycle: StoredLifecycle) => unknown)])[] = [
  ['user', 'user'], ['stagedFrom', 'stagedFrom'], ['startedAt', 'processedOn'], ['endedAt', 'finishedOn'], ['worker', 'worker'], ['exitCode', 'exitCode'], ['signal', 'signal'],
  ['reason', 'reason'], ['epoch', 'epoch'], ['devices', 'devices'], ['pinnedGpus', 'gpus'], ['retries', 'retries'],
  ['restaged', 'restaged'], ['restagedReason', 'restagedReason'], ['notify', 'notify'],
  // Once claimed, the limit its worker applies (the claim's `runLimit`).
  ['timeLimit', (fields) => readField('timeLimit', fields.status === 'staged' ? fields.timeLimit : fields.runLimit || fields.timeLimit)],
  ['deadline', (fields) => (fields.status === 'running' ? readField('deadline', fields.deadline) : undefined)],
  ['timeSignal', 'timeSignal'], ['beginAt', 'beginAt'],
  ['after', (_, lifecycle) => (Array.isArray(lifecycle.after) ? lifecycle.after : undefined)],
  ['waitingForDependencies', 'waitDeps'], ['dependencyNever', 'depsNever'],
  ['keepIfDependencyFails', (_, lifecycle) => (lifecycle.keepIfDependencyFails === true ? true : undefined)],
  ['retryOnFailure', (_, lifecycle) => (lifecycle.retry && typeof lifecycle.retry === 'object' ? lifecycle.retry : undefined)],
  ['failures', 'failures'], ['restarted', 'restarted'], ['canceledFor', 'canceledFor'], ['array', 'array'], ['arrayIndex', 'arrayIndex'],
  ['params', 'params'], ['output', 'output'], ['preempt', 'preempt'], ['preemptAfter', 'preemptAfter'], ['preempted', 'preempted'],
  ['preempting', (fields) => decodePreempting(fields.preempting)],
  ['lastRequest', (fields) => decodeLastRequest(fields)],
  ['usage', (fields) => decodeRunUsage(parseJson<unknown>(fields.usage, undefined))],
];

/** A running run's `preempting` field (`<run id>|<ms>`), as read; undefined when absent or not that. */
function decodePreempting(text: string | undefined): RunRecord['preempting'] {
  const match = text === undefined ? null : /^([^|]+)\|(\d+)$/.exec(text);
  return match ? { for: match[1]!, since: Number(match[2]) } : undefined;
}

/** A signed run's last request, as `runs show` says it; undefined when none or not one fitq wrote. */
function decodeLastRequest(fields: FlatFields): RunRecord['lastRequest'] {
  const request = parseRequest(fields.lastRequest);
  if (request === undefined || !/^\d+$/.test(request.at)) return undefined;
  const refused = fields.refusedRequest === fields.lastRequest && fields.refusedWhy ? { refused: fields.refusedWhy } : {};
  return { op: request.op, by: request.by, at: Math.floor(Number(request.at) / 1000), ...refused };
}

/** Demands as people read them, in human units ("gpu=1 mem=8G"): never an array's limit (withoutArrayLimits). */
export function formatDemands(demands: Resources): string {
  return formatHumanResources(withoutArrayLimits(demands));
}

/**
 * The demands as typed (the `requires` field), if they still say exactly what
 * `resources` holds: the typed text is not signed, so an altered one is never
 * shown. Otherwise the amounts in human units. An array's limit is a demand
 * of its own pool resource, never typed: not shown.
 */
function requiresText(typed: string | undefined, stored: Resources, known: Demands | undefined): string {
  const demands = withoutArrayLimits(stored);
  if (typed) {
    if (known !== undefined && known.typed === typed) {
      if (sameResources(known.amounts, demands)) return typed;
    } else {
      try {
        if (sameResources(parseResourceSpecs([typed]), demands)) return typed;
      } catch {
        // not a spec: fall through to the stored amounts
      }
    }
  }
  return formatDemands(demands);
}

/** Decodes a run's flat fields (runFields) into its RunRecord, with its exact demands. */
export function decodeRun(fields: FlatFields, known: KnownParts = {}): DecodedRun {
  const demands = known.demands ?? parseStoredResources(fields.resources);
  const lifecycle = parseJson<StoredLifecycle>(fields.lifecycle, {});
  const stored = (fields.status ?? 'staged') as RunStatus;
  const record: Record<string, unknown> = {
    id: fields.id ?? '',
    status: stored === 'staged' && fields.held === '1' ? 'held' : stored,
    command: parseJson<string[]>(fields.command, []),
    shell: fields.shell === '1',
    cwd: fields.cwd ?? '',
    env: parseJson<Record<string, string>>(fields.env, {}),
    resources: resourcesToJson(demands),
    requires: requiresText(fields.requires, demands, known.typed),
    priority: Number(fields.priority ?? 0),
    labels: parseJson<Record<string, string>>(fields.labels, {}),
    stagedAt: Number(fields.timestamp ?? 0),
    seq: Number(fields.seq ?? 0),
  };
  for (const [property, from] of OPTIONAL) {
    const value = typeof from === 'function' ? from(fields, lifecycle) : readField(from, fields[from]);
    if (value !== undefined) record[property] = value;
  }
  return { run: record as unknown as RunRecord, demands };
}
