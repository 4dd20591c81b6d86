/**
 * Signed requests: what may be done to a run its user signed (cancel,
 * hold, release, update, restart, rm) is asked for in a request signed by
 * the requester's own key (security/user-keys.ts), naming the operation,
 * the run, the requester and when (the Redis server's clock, in µs). The
 * scripts admit a request only from the run's user or an admin and only
 * later than the run's last one (no replay), and record it on the run
 * (`lastRequest`, and a release or restart as `startRequest`); workers
 * with --require-signed verify the signature before they act on it (a
 * cancel) or start a run it released or restarted. The one
 * place a request is written, read and verified.
 */
import { sign, verify, type KeyObject } from 'node:crypto';
import { quote } from '../text/quote.js';
import type { Verification } from './signing.js';
import { parsePublicKey } from './user-keys.js';

/** What a request may ask of a run. */
export type RequestOp = 'cancel' | 'hold' | 'release' | 'update' | 'restart' | 'rm';

/** The run hash field that records the last request admitted (`<op> <by> <at> <signature>[ <signed run>]`). */
export const LAST_REQUEST_FIELD = 'lastRequest';
/** The run hash field that records the last release or restart admitted: what let it start. */
export const START_REQUEST_FIELD = 'startRequest';

/** First line of what is signed: a request is never a run's payload, nor the other way. */
const DOMAIN = 'fitq-request-v1\n';
const SIGNATURE = /^ed25519:([A-Za-z0-9_-]{86})$/;

export interface Request {
  op: RequestOp;
  /** The requester: the name their key is registered under. */
  by: string;
  /** When, by the Redis server's clock, in µs. */
  at: string;
  signature: string;
  /** The run the signature names, when it is not the run it was recorded on (a dependent restarted with --cascade). */
  signedRun?: string;
}

function payload(namespace: string, op: RequestOp, runId: string, by: string, at: string): Buffer {
  return Buffer.from(`${DOMAIN}${namespace}\n${op}\n${runId}\n${by}\n${at}`, 'utf8');
}

/** A request for one run, as the scripts take it: `<by> <at> <signature>` (the script adds the op). */
export function signRequest(key: KeyObject, namespace: string, op: RequestOp, runId: string, by: string, at: string): string {
  return `${by} ${at} ed25519:${sign(null, payload(namespace, op, runId, by, at), key).toString('base64url')}`;
}

/** A recorded request (`lastRequest`), or undefined when the text is none. */
export function parseRequest(text: string | null | undefined): Request | undefined {
  const [op, by, at, signature, signedRun, ...rest] = (text ?? '').split(' ');
  if (!op || !by || !at || !signature || rest.length > 0) return undefined;
  return { op: op as RequestOp, by, at, signature, ...(signedRun ? { signedRun } : {}) };
}

/** Who may ask for a signed run's changes, as refusals say it. */
export const whoMay = (owner: string): string => `only ${owner || 'its user'} or an admin may`;

/**
 * A script's refusal of a change to a signed run (CODE.notYours, outcome
 * `notYours`); `requester`: who asked, as the request signer saw them
 * (operations/requests.ts).
 */
export function refusedRequestMessage(op: RequestOp, runId: string, owner: string, requester = 'fitq keys'): string {
  const verb = op === 'rm' ? 'remove' : op;
  return `run ${quote(runId)} is signed by the key of ${quote(owner)}: ${whoMay(owner)} ${verb} it, with their own key (${requester})`;
}

/**
 * Checks a recorded request on run `runId`, whose user is `owner`: made by
 * the owner or an admin (`isAdmin`), and signed by the key registered for
 * its requester (`keyOf`).
 */
export async function verifyRequest(
  recorded: string,
  run: { namespace: string; runId: string; owner: string },
  keyOf: (user: string) => Promise<string | undefined>,
  isAdmin: (user: string) => Promise<boolean>,
): Promise<Verification> {
  const request = parseRequest(recorded);
  if (request === undefined) return { ok: false, reason: `the recorded request ${quote(recorded)} is not one fitq wrote` };
  const what = `${request.op} by ${request.by}`;
  if (request.by !== run.owner && !(await isAdmin(request.by))) return { ok: false, reason: `${what}: ${whoMay(run.owner)}` };
  const registered = await keyOf(request.by);
  if (registered === undefined) return { ok: false, reason: `${what}: no key is registered for ${quote(request.by)}` };
  let key: KeyObject;
  try {
    key = parsePublicKey(registered);
  } catch {
    return { ok: false, reason: `${what}: the key registered for ${quote(request.by)} is not one fitq wrote` };
  }
  const signature = SIGNATURE.exec(request.signature)?.[1];
  const signed = payload(run.namespace, request.op, request.signedRun ?? run.runId, request.by, request.at);
  const ok = signature !== undefined && verify(null, signed, key, Buffer.from(signature, 'base64url'));
  return ok ? { ok: true } : { ok: false, reason: `${what}: not signed by the key registered for ${quote(request.by)}` };
}
