/**
 * Proven identities: each user signs the runs they stage with their own
 * Ed25519 key (Node's crypto), kept in a file only they can read; an admin
 * registers the public half under their name (`fitq keys add alice KEY`);
 * a worker started with --require-signed runs only runs whose signature a
 * registered key of the run's user makes good. The signature covers what
 * the shared secret's does (signing.ts, canonicalRunPayload), user and
 * host included, so a run cannot be passed off as another user's, nor
 * altered, without that user's private key.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { canonicalRunPayload, type RunToSign, type UnsignedRun, type Verification } from './signing.js';

/** Data field holding a run's user signature, `ed25519:<base64url>`. */
export const USER_SIGNATURE_FIELD = 'userSignature';
/** The variable that names the key file instead of the default path. */
export const KEY_FILE_ENV = 'FITQ_KEY_FILE';

const KEY_PREFIX = 'ed25519:';
/** First line of what is signed: a user signature is never an HMAC's payload, nor the other way. */
const DOMAIN = 'fitq-user-run-v1\n';
const PUBLIC_KEY = /^ed25519:([A-Za-z0-9_-]{43})$/;
const SIGNATURE = /^ed25519:([A-Za-z0-9_-]{86})$/;

/** Where a user's private key is: FITQ_KEY_FILE, else `$XDG_CONFIG_HOME/fitq/id_ed25519.pem` (~/.config). */
export function keyFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env[KEY_FILE_ENV]) return env[KEY_FILE_ENV];
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'fitq', 'id_ed25519.pem');
}

/** A public key as registered and printed: `ed25519:<43 base64url characters>` (the raw 32 bytes). */
export function formatPublicKey(key: KeyObject): string {
  return `${KEY_PREFIX}${key.export({ format: 'jwk' }).x!}`;
}

/** A public key as typed (`fitq keys add`), or a UsageError quoting it. */
export function parsePublicKey(text: string): KeyObject {
  const raw = PUBLIC_KEY.exec(text)?.[1];
  if (raw === undefined) throw new UsageError(`invalid public key ${quote(text)}: expected ed25519: and 43 base64url characters, as fitq keys init prints it`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
}

/** Makes a key pair and writes its private key (PEM, mode 0600) at `path`; refuses to replace one unless `force`. Returns the public key. */
export function createKeyFile(path: string, force = false): string {
  if (existsSync(path) && !force) throw new UsageError(`a key already exists at ${quote(path)}: fitq keys init --force replaces it (its runs' signatures then no longer match a registered key)`);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  chmodSync(path, 0o600);
  return formatPublicKey(publicKey);
}

/**
 * The stager's key: the file `path`, or the one FITQ_KEY_FILE names, else
 * the default one if it exists (undefined if not). A key file that was
 * named but is missing, or is no Ed25519 key, is a UsageError.
 */
export function stagerKey(path?: string, env: NodeJS.ProcessEnv = process.env): KeyObject | undefined {
  const named = path ?? (env[KEY_FILE_ENV] || undefined);
  const key = readKeyFile(named ?? keyFilePath(env));
  if (key === undefined && named !== undefined) throw new UsageError(`no key at ${quote(named)}${path === undefined ? ` (${KEY_FILE_ENV})` : ''}: fitq keys init makes one`);
  return key;
}

/** The private key at `path`, or undefined when there is none; a UsageError for a file that is no Ed25519 key. */
export function readKeyFile(path: string): KeyObject | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read key file ${quote(path)}: ${(error as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new UsageError(`key file ${quote(path)} holds no private key (fitq keys init makes one)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UsageError(`key file ${quote(path)} holds a ${key.asymmetricKeyType ?? 'unknown'} key, not an Ed25519 one (fitq keys init makes one)`);
  return key;
}

/** The public key of a private one, as registered. */
export const publicKeyOf = (key: KeyObject): string => formatPublicKey(createPublicKey(key));

/**
 * The runs with a `userSignature` field added to (a copy of) their fields,
 * signed as signing.ts's signRuns signs (the priority as the stage script
 * stores it); the same runs without a key.
 */
export function signRunsAsUser<T extends UnsignedRun>(runs: readonly T[], namespace: string, key: KeyObject | undefined): T[] {
  if (key === undefined) return [...runs];
  return runs.map((run) => {
    const signature = signAsUser(key, { namespace, runId: run.id, fields: { ...run.fields, priority: String(run.priority) } });
    return { ...run, fields: { ...run.fields, [USER_SIGNATURE_FIELD]: signature } };
  });
}

/** A run's user signature, for its `userSignature` field. */
export function signAsUser(key: KeyObject, run: RunToSign): string {
  return `${KEY_PREFIX}${sign(null, Buffer.from(DOMAIN + canonicalRunPayload(run), 'utf8'), key).toString('base64url')}`;
}

export const REJECTED_NO_USER_SIGNATURE = 'rejected: run is not signed by its user (this worker requires signed runs: fitq keys init)';

/** Checks a run's user signature against the key registered for its user (`registered`: none when undefined). */
export function verifyUserSignature(run: RunToSign, registered: string | undefined): Verification {
  const user = run.fields.user;
  const given = run.fields[USER_SIGNATURE_FIELD];
  if (!given) return { ok: false, reason: REJECTED_NO_USER_SIGNATURE };
  if (user === undefined) return { ok: false, reason: 'rejected: run names no user, so no key can prove it' };
  if (registered === undefined) return { ok: false, reason: `rejected: no key is registered for ${quote(user)} (an admin registers it: fitq keys add ${user} PUBLIC_KEY)` };
  const signature = SIGNATURE.exec(given)?.[1];
  let key: KeyObject;
  try {
    key = parsePublicKey(registered);
  } catch {
    return { ok: false, reason: `rejected: the key registered for ${quote(user)} is not one fitq wrote (fitq keys add ${user} PUBLIC_KEY again)` };
  }
  const ok = signature !== undefined && verify(null, Buffer.from(DOMAIN + canonicalRunPayload(run), 'utf8'), key, Buffer.from(signature, 'base64url'));
  return ok ? { ok: true } : { ok: false, reason: `rejected: not signed by the key registered for ${quote(user)} (the run was altered, or signed by someone else)` };
}
