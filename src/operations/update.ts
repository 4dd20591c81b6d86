/**
 * Editing staged runs (`fitq update`, FitqClient.updateRuns): priority,
 * demands, labels, pinned GPUs of runs that are staged or held, with the
 * checks staging makes (model/run-edits.ts), re-signed by the editor when signed.
 *
 * Every run is read and its edit checked first: an unknown id, a bad value,
 * a run that is not staged or held, a signed run without the secret refuse
 * the whole request (nothing is written). Then one script call applies the
 * edits (updateRuns-*.lua), each run on its own and only if it is still
 * staged or held with the data the edit was made from: a run is claimed
 * either with its old demands or staged with its new ones. A run whose data
 * changed meanwhile (another edit) is read and edited again; one claimed,
 * ended or removed meanwhile is reported as refused, the others are updated.
 */
import { UsageError } from '../errors.js';
import { validateRunId } from '../model/names.js';
import { dataFields, fitqRunData, runDataJson, stagedFields } from '../model/run-data.js';
import { decodeRun } from '../model/run-decode.js';
import { checkChanges, diffFields, editedFields, shapeOfEdited, type FieldChange, type Fields, type RunChanges } from '../model/run-edits.js';
import { labelsOf } from '../model/labels.js';
import type { RunRecord } from '../model/run-record.js';
import { execPipeline } from '../redis/pipeline.js';
import { parseStoredResources, toDemands } from '../resources/spec.js';
import { canonicalRunPayload, signRuns, verifyRun } from '../security/signing.js';
import { publicKeyOf, signRunsAsUser, USER_SIGNATURE_FIELD, verifyUserSignature } from '../security/user-keys.js';
import { refusedRequestMessage } from '../security/request-signature.js';
import { requestSigner } from './requests.js';
import { quote } from '../text/quote.js';
import { refusalOf } from '../queue/script-codes.js';
import type { Scripts } from '../queue/scripts.js';
import type { UpdateScriptRun } from '../queue/run-calls.js';
import type { QueueContext } from './context.js';
import { reconcile } from './upkeep.js';

/** Times a run whose data changed between reading and writing it (another edit) is read and edited again. */
const EDIT_ATTEMPTS = 5;

/** Runs edited per script call (a call of this many holds Redis a few ms), and the most bytes of job data one call carries. */
const UPDATE_CHUNK = 500;
const UPDATE_CHUNK_BYTES = 16 * 1024 * 1024;

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
  /** Refused as the signed run of this user, who or an admin must ask for it. */
  owner?: string;
}

export interface UpdateOptions {
  /** Check and show what would change; write nothing. */
  dryRun?: boolean;
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
 * Edits staged (and held) runs, as BullMQ's API may have left them (a
 * priority it changed is reconciled first); see the module's comment for
 * what is checked first and how runs racing a claim or another edit fare.
 * Signed runs are signed anew with the context's secret, or refused
 * without it. Returns a result per run, in the order given (each id once).
 */
export async function updateRuns(
  ctx: QueueContext,
  runIds: readonly string[],
  changes: RunChanges,
  options: UpdateOptions = {},
): Promise<UpdateResult[]> {
  await reconcile(ctx);
  const ids = [...new Set(runIds)];
  ids.forEach(validateRunId);
  if (ids.length === 0) throw new UsageError('name the runs to update');
  checkChanges(changes);
  // New demands are parsed once here, for every run they edit.
  if (changes.resources !== undefined) changes = { ...changes, resources: toDemands(changes.resources, { keepZero: true }) };
  const results = new Map<string, UpdateResult>();
  let pending = await planEdits(ctx, ids, changes, true);
  const requests = options.dryRun ? undefined : await requestSigner(ctx, 'update');
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
      const outcomes = await ctx.scripts.updateRuns(chunk.map((plan) => ({ ...plan.script, request: requests?.of(plan.id) ?? '' })));
      outcomes.forEach((reply, j) => {
        const plan = chunk[j]!;
        if (reply.outcome === 'updated') results.set(plan.id, { id: plan.id, outcome: 'updated', changes: plan.changes, run: plan.run });
        else if (reply.outcome === 'changed' && attempt < EDIT_ATTEMPTS) again.push(plan.id);
        else {
          const owner = reply.outcome === 'notYours' ? { owner: reply.owner } : {};
          results.set(plan.id, { id: plan.id, outcome: 'refused', changes: plan.changes, reason: refusedReason(plan.id, reply, requests?.requester), ...owner });
        }
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

function refusedReason(id: string, reply: Awaited<ReturnType<Scripts['updateRuns']>>[number], requester?: string): string {
  if (reply.outcome === 'status') return `run ${quote(id)} is ${reply.status} (it changed meanwhile): not updated`;
  if (reply.outcome === 'gone') return `run ${quote(id)} was removed meanwhile: not updated`;
  if (reply.outcome === 'notYours') return `${refusedRequestMessage('update', id, reply.owner, requester)}: not updated`;
  return `run ${quote(id)} kept changing meanwhile: not updated`;
}

/**
 * Reads the runs and makes each one's edit. With `strict` (the first
 * reading), a run that cannot be edited refuses the whole request; after
 * (runs edited meanwhile), such a run is recorded in `results` as refused.
 */
async function planEdits(
  ctx: QueueContext,
  ids: readonly string[],
  changes: RunChanges,
  strict: boolean,
  results?: Map<string, UpdateResult>,
): Promise<PlannedEdit[]> {
  const hashes = await readRunHashes(ctx, ids);
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
async function readRunHashes(ctx: QueueContext, ids: readonly string[]): Promise<(Record<string, string> | undefined)[]> {
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
function planEdit(ctx: QueueContext, id: string, hash: Record<string, string>, changes: RunChanges): PlannedEdit {
  const before = stagedFields(hash);
  if (before.command === undefined) throw new UsageError(`run ${quote(id)} holds no run data fitq can read: not updated`);
  const demands = parseStoredResources(before.resources);
  const edited = editedFields(id, before, demands, changes, hash.array);
  const after = edited.fields;
  const priority = Number(after.priority);
  const secretSigned = before.signature === undefined ? after : signedAnew(ctx, id, before, after, priority);
  const signed = before[USER_SIGNATURE_FIELD] === undefined ? secretSigned : userSignedAnew(ctx, id, before, secretSigned, priority);
  const data = runDataJson(signed, priority);
  const fieldChanges = diffFields(before, after, { before: { demands }, after: edited });
  return {
    id,
    hash,
    changes: fieldChanges,
    // As stored once written: the hash with the edited data's fields over it (never parsed back from the JSON).
    run: decodeRun({ ...hash, data, runData: data, ...signed, priority: String(priority), id }, { demands: edited.demands, typed: edited.typed }).run,
    script: {
      id,
      expectedData: fitqRunData(hash) ?? '',
      data,
      shape: shapeOfEdited(edited),
      priority,
      changes: fieldChanges.map((change) => change.field).join(','),
    },
  };
}

/**
 * The edited fields of a run its user signed (security/user-keys.ts): its
 * user signature kept when no signed field changed, else signed anew with
 * the editor's own key, which must be the run's user's. Anyone else is
 * refused, saying who may: a run proven to be alice's stays alice's.
 */
function userSignedAnew(ctx: QueueContext, id: string, before: Fields, after: Fields, priority: number): Fields {
  const run = (fields: Fields) => ({ namespace: ctx.keys.base, runId: id, fields: { ...fields, priority: fields.priority ?? String(priority) } });
  if (canonicalRunPayload(run(before)) === canonicalRunPayload(run(after))) return { ...after, [USER_SIGNATURE_FIELD]: before[USER_SIGNATURE_FIELD]! };
  const owner = before.user ?? '';
  if (ctx.userKey === undefined || owner !== ctx.stager.user || !verifyUserSignature(run(before), publicKeyOf(ctx.userKey)).ok) {
    throw new UsageError(`run ${quote(id)} is signed by the key of ${quote(owner)}: only ${owner || 'its user'}, with that key, may edit it`);
  }
  return signRunsAsUser([{ id, priority, fields: after }], ctx.keys.base, ctx.userKey)[0]!.fields;
}

/**
 * The edited fields of a signed run: with its signature as it is when no
 * signed field changed (labels are not signed), else signed anew.
 */
function signedAnew(ctx: QueueContext, id: string, before: Fields, after: Fields, priority: number): Fields {
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
function resign(ctx: QueueContext, id: string, before: Fields, after: Fields, priority: number): Fields {
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
