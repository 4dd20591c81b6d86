/**
 * Arrays and parameter sweeps: one stage request expanded into a run per
 * array index or per row of parameters, all staged in one batch (all or
 * nothing) and sharing an array id.
 *
 * Each run gets, in its environment, FITQ_ARRAY_ID, FITQ_ARRAY_INDEX,
 * FITQ_ARRAY_COUNT and FITQ_PARAM_<NAME> (the name in capitals) for each
 * parameter; its command words, --run-id and label values have their
 * placeholders filled in: `{index}`, `{array}`, `{id}` (not in --run-id)
 * and `{NAME}` for each parameter. `{{index}}` stays `{index}`, and
 * `${NAME}` is the shell's, never a placeholder. An unknown placeholder is
 * refused, quoting it.
 *
 * An array with a limit (`--array 0-19%4`) gets a pool resource of its own,
 * `array.<id>`, of that capacity, created by the script that stages it;
 * each of its runs demands 1 of it. The claim reserves it like any pool
 * resource, so the limit holds across every worker at once; a run waiting
 * for it is passed over by claims (includes/throttled.lua) and says
 * `waiting for array <id> (4 of 4 running)`. The resource goes with the
 * array's last run (includes/forgetArrayRun.lua).
 */
import { UsageError } from '../errors.js';
import { MICROS_PER_UNIT } from '../resources/amount.js';
import { formatResources, sortResources } from '../resources/spec.js';
import { quote } from '../text/quote.js';
import { checkPlaceholders, fillPlaceholders, placeholdersOf } from './placeholders.js';
import { ARRAY_RESOURCE_PREFIX } from '../resources/array-limit.js';
import { MAX_REPEAT, newRunId, prepareRuns, type ArrayRequest, type PreparedRun, type StageRequest } from './stage.js';

/** The largest array index. */
export const MAX_ARRAY_INDEX = 10_000_000;

/** Placeholders every run of an array has. */
const BUILT_IN = ['index', 'array', 'id'] as const;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Validates parameter names: identifiers, none built in, none twice (as environment names, in capitals). */
export function validateParamNames(names: readonly string[], where: string): void {
  const seen = new Map<string, string>();
  for (const name of names) {
    if (!PARAM_NAME.test(name)) {
      throw new UsageError(`invalid parameter name ${quote(name)} in ${where}: use letters, digits and '_', not starting with a digit`);
    }
    if ((BUILT_IN as readonly string[]).includes(name)) {
      throw new UsageError(`parameter name ${quote(name)} in ${where} is taken: {${name}} is the run's own`);
    }
    const env = paramEnvName(name);
    const other = seen.get(env);
    if (other !== undefined) throw new UsageError(`parameter ${quote(name)} in ${where} given twice (${other === name ? 'the same name' : `as ${quote(other)}: both are ${env}`})`);
    seen.set(env, name);
  }
}

export function paramEnvName(name: string): string {
  return `FITQ_PARAM_${name.toUpperCase()}`;
}

/** A new array id: 12 hex digits, as run ids. */
export function newArrayId(): string {
  return newRunId();
}

/** The rows of an array: index and parameters of each run. */
function arrayRows(array: ArrayRequest): { index: number; params: Readonly<Record<string, string>> }[] {
  const { indices, params } = array;
  if (indices !== undefined && params !== undefined && indices.length !== params.length) {
    throw new UsageError(`an array's indices and rows of parameters must be as many: ${indices.length} indices, ${params.length} rows`);
  }
  const count = indices?.length ?? params?.length ?? 0;
  if (count === 0) throw new UsageError('an array needs at least one run: give its indices or parameters');
  if (count > MAX_REPEAT) throw new UsageError(`too many runs in the array: ${count} (at most ${MAX_REPEAT})`);
  const seen = new Set<number>();
  for (const index of indices ?? []) {
    if (!Number.isSafeInteger(index) || index < 0 || index > MAX_ARRAY_INDEX) {
      throw new UsageError(`invalid array index ${quote(String(index))}: expected an integer from 0 to ${MAX_ARRAY_INDEX}`);
    }
    if (seen.has(index)) throw new UsageError(`array index ${index} given twice`);
    seen.add(index);
  }
  const names = params?.[0] === undefined ? [] : Object.keys(params[0]);
  validateParamNames(names, 'the parameters');
  for (const [row, values] of (params ?? []).entries()) {
    const keys = Object.keys(values);
    if (keys.length !== names.length || keys.some((key) => !names.includes(key)) || Object.values(values).some((value) => typeof value !== 'string')) {
      throw new UsageError(`row ${row + 1} of the parameters has other names than the first (${names.join(', ')}): ${quote(keys.join(', '))}`);
    }
  }
  return Array.from({ length: count }, (_, i) => ({ index: indices?.[i] ?? i, params: params?.[i] ?? {} }));
}

/**
 * Prepares the runs of an array request: one per row, each staged as the
 * request with its placeholders filled in, in one batch.
 */
export function prepareArray(request: StageRequest & { array: ArrayRequest }): PreparedRun[] {
  const { array } = request;
  if ((request.repeat ?? 1) !== 1) throw new UsageError('--repeat does not go with --array or --param: the array gives the number of runs');
  const limit = array.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_REPEAT)) {
    throw new UsageError(`expected the array's limit (%N) to be an integer from 1 to ${MAX_REPEAT}, got ${quote(String(limit))}`);
  }
  const rows = arrayRows(array);
  const names = Object.keys(rows[0]!.params);
  for (const name of Object.keys(request.env ?? {})) {
    if (name.startsWith('FITQ_ARRAY_') || name.startsWith('FITQ_PARAM_')) {
      throw new UsageError(`--env ${quote(name)}: the array sets FITQ_ARRAY_* and FITQ_PARAM_* itself`);
    }
  }
  const known = new Set<string>([...BUILT_IN, ...names]);
  const noId = new Set([...known].filter((name) => name !== 'id'));
  if (request.runId !== undefined) checkPlaceholders('--run-id', request.runId, noId);
  const command = Array.isArray(request.command) ? request.command : [];
  for (const word of command) if (typeof word === 'string') checkPlaceholders('the command', word, known);
  for (const [key, value] of Object.entries(request.labels ?? {})) if (typeof value === 'string') checkPlaceholders(`label ${quote(key)}`, value, known);
  if (request.runId !== undefined && rows.length > 1 && placeholdersOf(request.runId).length === 0) {
    throw new UsageError(`--run-id ${quote(request.runId)} names one run: give the array's runs a placeholder, like ${quote(`${request.runId}-{index}`)}`);
  }
  // The demands are parsed by the first run's prepareRuns; the others take them as parsed.
  let resources = request.resources;
  const arrayId = newArrayId();
  const resource = `${ARRAY_RESOURCE_PREFIX}${arrayId}`;
  return rows.map(({ index, params }) => {
    const values: Record<string, string> = { ...params, index: String(index), array: arrayId };
    const id = request.runId === undefined ? newRunId() : fillPlaceholders(request.runId, values);
    values.id = id;
    const env: Record<string, string> = {
      ...request.env,
      FITQ_ARRAY_ID: arrayId,
      FITQ_ARRAY_INDEX: String(index),
      FITQ_ARRAY_COUNT: String(rows.length),
    };
    for (const [name, value] of Object.entries(params)) env[paramEnvName(name)] = value;
    const labels = Object.fromEntries(Object.entries(request.labels ?? {}).map(([key, value]) => [key, fillPlaceholders(value, values)]));
    const [run] = prepareRuns(
      { ...request, resources, array: undefined, repeat: 1, runId: id, command: command.map((word) => (typeof word === 'string' ? fillPlaceholders(word, values) : word)), labels, env },
      values,
    );
    const prepared = run!;
    resources = prepared.given;
    prepared.array = arrayId;
    prepared.fields.arrayIndex = String(index);
    if (names.length > 0) prepared.fields.params = JSON.stringify(params);
    if (limit !== undefined) {
      prepared.demands = sortResources(new Map([...prepared.demands, [resource, MICROS_PER_UNIT]]));
      prepared.fields.resources = formatResources(prepared.demands);
      prepared.limit = limit;
    }
    return prepared;
  });
}

/** The runs of a stage request: an array's, one per row, or its repeats. */
export function prepareRequest(request: StageRequest): PreparedRun[] {
  return request.array === undefined ? prepareRuns(request) : prepareArray({ ...request, array: request.array });
}
