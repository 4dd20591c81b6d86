/**
 * Signed runs: `fitq stage` with a shared secret stores an HMAC-SHA256 of
 * everything that decides what a run executes and where, and a worker with
 * the same secret starts only runs whose signature matches. Write access to
 * Redis alone then cannot make a worker run a new or altered command.
 *
 * The signature covers the run as stored (the run hash's own strings), so
 * stager and worker sign exactly the same bytes with no re-formatting.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { signedFields } from '../model/run-fields.js';

/** Run hash field holding the signature, `v1:<64 hex digits>`. */
export const SIGNATURE_FIELD = 'signature';

const VERSION = 'v1';
/** First element of every payload, so it can never be mistaken for another kind of message. */
const DOMAIN = 'fitq-run-v1';
const SIGNATURE_PATTERN = /^v1:([0-9a-f]{64})$/;

/**
 * Run fields covered, in the field table's order (model/run-fields.ts),
 * after the namespace and the run id. Between them they decide what runs
 * (command, shell, cwd, env) and where (demands, pinned GPUs), how often
 * (retries) and before what (priority).
 */
export const SIGNED_FIELDS: readonly string[] = signedFields('always');

/**
 * Fields covered only when present, after SIGNED_FIELDS, each as its name
 * and value: runs signed before they existed keep their signature. The
 * time limit and signal, and the files the worker writes the run's output
 * to (`fitq stage --output/--error`).
 */
export const SIGNED_IF_PRESENT: readonly string[] = signedFields('ifPresent');

export const REJECTED_UNSIGNED = 'rejected: run is not signed (this worker requires signed runs)';
export const REJECTED_MISMATCH = 'rejected: signature does not match (the run was altered or signed with another secret)';
export const REJECTED_FORMAT = `rejected: signature is not in a format this worker knows (expected ${VERSION}:<hex>)`;

export interface RunToSign {
  /** The namespace's key prefix, e.g. `fitq:{default}:`: binds the run to its prefix and queue. */
  namespace: string;
  /** The id the run is stored under (its key), never its hash's own `id` field. */
  runId: string;
  /** The run's flat fields (runFields, or a run about to be staged); only the signed ones are read. */
  fields: Readonly<Record<string, string | undefined>>;
}

export type Verification = { ok: true } | { ok: false; reason: string };

/**
 * The exact text that is signed: a JSON array of strings in a fixed order,
 * with null for an absent field (so absent and empty differ). JSON string
 * escaping makes it unambiguous: no two different runs have the same payload.
 */
export function canonicalRunPayload(run: RunToSign): string {
  const values = SIGNED_FIELDS.map((name) => (Object.hasOwn(run.fields, name) ? (run.fields[name] ?? null) : null));
  const extra = SIGNED_IF_PRESENT.flatMap((name) => (run.fields[name] !== undefined && Object.hasOwn(run.fields, name) ? [name, run.fields[name]!] : []));
  return JSON.stringify([DOMAIN, run.namespace, run.runId, ...values, ...extra]);
}

function mac(secret: Uint8Array, run: RunToSign): Buffer {
  return createHmac('sha256', secret).update(canonicalRunPayload(run), 'utf8').digest();
}

/** The signature of a run, `v1:<hex>`, for its `signature` field. */
export function signRun(secret: Uint8Array, run: RunToSign): string {
  return `${VERSION}:${mac(secret, run).toString('hex')}`;
}

/**
 * Checks a run's `signature` field against the secret, in constant time.
 * The reason, when it fails, is what the run's `reason` field gets.
 */
export function verifyRun(secret: Uint8Array, run: RunToSign): Verification {
  const signature = Object.hasOwn(run.fields, SIGNATURE_FIELD) ? run.fields[SIGNATURE_FIELD] : undefined;
  if (!signature) return { ok: false, reason: REJECTED_UNSIGNED };
  const hex = SIGNATURE_PATTERN.exec(signature)?.[1];
  if (hex === undefined) return { ok: false, reason: REJECTED_FORMAT };
  const expected = mac(secret, run);
  const given = Buffer.from(hex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? { ok: true } : { ok: false, reason: REJECTED_MISMATCH };
}

/** A run about to be staged: its id, priority and the fields its hash gets. */
export interface UnsignedRun {
  id: string;
  priority: number;
  fields: Record<string, string>;
}

/**
 * The runs with a `signature` field added to (a copy of) their fields; the
 * same runs when there is no secret. The priority is signed as the stage
 * script stores it (`String(priority)`).
 */
export function signRuns<T extends UnsignedRun>(runs: readonly T[], namespace: string, secret: Uint8Array | undefined): T[] {
  if (secret === undefined) return [...runs];
  return runs.map((run) => {
    const signature = signRun(secret, { namespace, runId: run.id, fields: { ...run.fields, priority: String(run.priority) } });
    return { ...run, fields: { ...run.fields, [SIGNATURE_FIELD]: signature } };
  });
}
