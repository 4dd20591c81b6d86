/**
 * The codes the Lua scripts reply with, in one table for both sides: the
 * scripts read it as `CODE.<name>` (scripts.ts defines it ahead of every
 * script), and `refusal` turns the codes that refuse what a user asked for
 * into the error the user sees.
 */
import { UsageError } from '../errors.js';
import type { NamespaceKeys } from './keys.js';
import { quote } from '../text/quote.js';
import { arrayOfLimit } from '../resources/array-limit.js';
import { refusedRequestMessage, type RequestOp } from '../security/request-signature.js';

export const SCRIPT_CODES = {
  /** Done: claimed, staged, recorded, canceled, registered, removed. */
  ok: 1,
  /** Nothing to do: already so, the run moved on or already ended, the registration is not this one. */
  unchanged: 0,
  /** claimRun: a staged run fits the worker's total capacity, but none may start now. */
  waiting: 2,
  /** claimRun: no staged run fits the worker's total capacity. */
  idle: 3,
  /** claimRun: the worker already runs its maximum of runs. */
  full: 4,
  /** claimRun: the namespace's queue is paused. */
  paused: 5,
  /** cancelRun: the run's worker is asked to stop it. */
  requested: 6,
  /** claimRun: the worker is drained (`fitq drain`): it claims and holds nothing. */
  drained: 7,
  /** claimRun: the fit index of the worker's class is catching up with many changed shapes: claim again at once. */
  indexing: 8,
  /** The worker is not registered under this token, or its lease has run out. */
  fenced: -1,
  /** A run id that is already taken (the value). */
  runIdTaken: -2,
  /** A worker name a live worker holds. */
  workerNameTaken: -3,
  /** A run that is running, which the operation does not touch (the value). */
  runRunning: -4,
  /** A run id that names no run (the value). */
  unknownRun: -5,
  /** A name that is not a pool resource (the value). */
  notInPool: -6,
  /** The namespace holds runs stored by an older fitq. */
  olderLayout: -9,
  /** A batch staged in chunks that is no longer open: its deadline passed before its stager committed it. */
  batchExpired: -10,
  /** stageRuns: a dependency (`--after`) that names no run (the value). */
  unknownDependency: -31,
  /** stageRuns: a dependency on the run itself or on one staged after it in the same call: a cycle (the value). */
  dependencyCycle: -32,
  /** stageRuns: a dependency on a whole array (`--after ARRAY`) that has no run, or none fitq counts (the array id). */
  unknownArrayDependency: -33,
  /** setPool: the limit of an array (`array.<id>`, the value) that has no staged or running runs (ended, or none such): nothing to limit. */
  arrayNotGoing: -34,
  /** setPool: removing the limit of an array that still has staged or running runs (the value): they would never start. */
  arrayGoing: -35,
  /** stageRuns: the stager's `staged` quota would be passed ("user open staged total": runs not ended, the quota, runs staged). */
  overQuota: -36,
  /** reclaimRun: the run moved on without the claim a failover lost (why, its status, another worker or the resource no longer free). */
  claimLost: -40,
  /** A change to a run its user signed, asked for with no request signed by that user or an admin ("op runId user"; security/request-signature.ts). */
  notYours: -41,
} as const;

export type ScriptCode = keyof typeof SCRIPT_CODES;

const NAME_OF = new Map<number, ScriptCode>(Object.entries(SCRIPT_CODES).map(([name, code]) => [code, name as ScriptCode]));

/** The table as Lua source, defined ahead of every script. */
export function luaCodeTable(): string {
  const fields = Object.entries(SCRIPT_CODES).map(([name, code]) => `${name} = ${code}`);
  return `local CODE = {${fields.join(', ')}}\n`;
}

/** The name of a reply code; throws on a code no script replies with. */
export function codeName(code: unknown): ScriptCode {
  const name = NAME_OF.get(Number(code));
  if (name === undefined) throw new Error(`unexpected script reply code ${String(code)}`);
  return name;
}

/** A user's request a script refused; `code` says which refusal. */
export class RefusedError extends UsageError {
  constructor(
    readonly code: ScriptCode,
    message: string,
    /** What the script replied with the code. */
    readonly value = '',
  ) {
    super(message);
  }
}

/** The value of a notYours reply: the operation refused, the run, its user. */
export function notYoursOf(value: string): { op: RequestOp; runId: string; owner: string } {
  const [op, runId, owner] = value.split(' ');
  return { op: op as RequestOp, runId: runId ?? '', owner: owner ?? '' };
}

/**
 * The error for a refusing reply code (with the value the script replied
 * with it), or undefined when the code refuses nothing. `keys`: the
 * namespace a script replied for (named by an older-layout refusal).
 */
export function refusal(code: unknown, value: unknown, keys?: NamespaceKeys): RefusedError | undefined {
  const name = codeName(code);
  const text = String(value ?? '');
  switch (name) {
    case 'runIdTaken':
      return new RefusedError(name, `run id ${quote(text)} is already taken`);
    case 'workerNameTaken':
      return new RefusedError(name, `a live worker is already named ${quote(text)}: choose another --name`);
    case 'runRunning':
      return new RefusedError(name, `run ${quote(text)} is running: cancel it first, or use --force`);
    case 'unknownRun':
      return new RefusedError(name, `unknown run ${quote(text)}`);
    case 'notInPool':
      return new RefusedError(name, `no pool resource named ${quote(text)}`);
    case 'arrayNotGoing':
      return new RefusedError(
        name,
        `cannot set ${quote(text)}: array ${arrayOfLimit(text) ?? text} has no staged or running runs (an array gets its limit from fitq stage --array LIST%N): nothing was set`,
      );
    case 'arrayGoing': {
      const array = arrayOfLimit(text) ?? text;
      return new RefusedError(name, `${quote(text)} is the limit of array ${array}: it goes with the array's runs (fitq runs rm --array ${array}); change it with fitq pool set ${text}=N`);
    }
    case 'olderLayout':
      return new RefusedError(
        name,
        `namespace '${keys?.base}' holds runs stored by an older fitq, which this version cannot read: ` +
          `delete its keys (redis-cli --scan --pattern '${keys?.base}*' | xargs -r redis-cli del) or use another --queue`,
      );
    case 'unknownDependency':
      return new RefusedError(name, `unknown run ${quote(text)} in a dependency (--after): nothing was staged`);
    case 'unknownArrayDependency':
      return new RefusedError(name, `unknown array ${quote(text)} in a dependency (--after): nothing was staged`);
    case 'dependencyCycle':
      return new RefusedError(name, `dependency on ${quote(text)} would make a cycle (a run cannot wait for itself or for a run staged after it): nothing was staged`);
    case 'overQuota': {
      const [user, open, cap, total] = text.split(' ');
      return new RefusedError(
        name,
        `quota: ${user} may have ${cap} runs staged or running at once (staged=${cap}), has ${open}, and this stages ${total}: nothing was staged (fitq quota ls)`,
      );
    }
    case 'notYours': {
      const { op, runId, owner } = notYoursOf(text);
      return new RefusedError(name, refusedRequestMessage(op, runId, owner), text);
    }
    case 'batchExpired':
      return new RefusedError(name, 'staging took longer than the batch may stay open (Redis too slow or busy): nothing was staged');
    default:
      return undefined;
  }
}

/** The refusal a script gives with this code, made by the client itself (e.g. before or instead of a script call). */
export function refusalOf(name: Exclude<ScriptCode, 'ok' | 'unchanged' | 'waiting' | 'idle' | 'full' | 'paused' | 'requested' | 'fenced' | 'drained' | 'indexing'>, value: string): RefusedError {
  return refusal(SCRIPT_CODES[name], value)!;
}

/** Throws the refusal a reply carries, if any; returns its code's name otherwise. */
export function acceptReply(code: unknown, value: unknown, keys: NamespaceKeys): ScriptCode {
  const refused = refusal(code, value, keys);
  if (refused) throw refused;
  return codeName(code);
}
