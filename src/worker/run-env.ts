/**
 * The environment a run inherits from its worker. The worker's own fitq
 * credentials are not part of it: a run printing its environment would put
 * them in its log, in Redis, for anyone who can read the namespace. Only
 * with `passRedisEnv` (`fitq worker --pass-redis-env`) does a run get the
 * worker's connection settings, e.g. to stage further runs itself. The
 * signing secret is never passed on.
 */
import { resolve } from 'node:path';
import { withoutArrayLimits } from '../resources/array-limit.js';
import { SENTINEL_LOGIN_ENV } from '../redis/redis-url.js';
import type { TlsFiles } from '../redis/tls-options.js';
import { resourcesToJson, type Resources } from '../resources/spec.js';
import type { ClaimedRun } from '../model/claimed-run.js';

/** Where fitq reads its Redis connection settings: the URL (password included) and TLS files. */
export const CONNECTION_ENV = ['FITQ_REDIS_URL', 'REDIS_URL', ...SENTINEL_LOGIN_ENV, 'FITQ_REDIS_CA', 'FITQ_REDIS_CERT', 'FITQ_REDIS_KEY'] as const;
/** Where fitq reads the shared secret runs are signed with. */
export const SECRET_ENV = ['FITQ_SECRET', 'FITQ_SECRET_FILE'] as const;

/** The worker's own connection settings, given as options or flags (they win over its environment). */
export interface WorkerConnection {
  redisUrl?: string | undefined;
  tlsFiles?: TlsFiles | undefined;
}

/**
 * The worker's environment `env` as its runs inherit it: without fitq's
 * connection and secret variables, unless `passConnection`, when the
 * connection settings the worker uses are passed on (`connection`, else its
 * environment's), still without the secret.
 */
export function inheritedEnv(env: NodeJS.ProcessEnv, passConnection: boolean, connection: WorkerConnection = {}): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) inherited[name] = value;
  for (const name of SECRET_ENV) delete inherited[name];
  if (!passConnection) {
    for (const name of CONNECTION_ENV) delete inherited[name];
    return inherited;
  }
  if (connection.redisUrl) inherited.FITQ_REDIS_URL = connection.redisUrl;
  const files = connection.tlsFiles ?? {};
  // Absolute: a run has a working directory of its own.
  if (files.ca) inherited.FITQ_REDIS_CA = resolve(files.ca);
  if (files.cert) inherited.FITQ_REDIS_CERT = resolve(files.cert);
  if (files.key) inherited.FITQ_REDIS_KEY = resolve(files.key);
  return inherited;
}

/**
 * A run's FITQ_RESOURCES: what its claim granted it, as JSON numbers
 * (`{"gpu":1,"mem":8000000000}`); an array's limit is the array's, not the
 * run's, and is left out.
 */
export function grantedResourcesEnv(demands: Resources): string {
  return JSON.stringify(resourcesToJson(withoutArrayLimits(demands)));
}

/**
 * Which attempt of the run this is (FITQ_ATTEMPT, 1 for its first), when its
 * claim said; and FITQ_PREEMPTED=1 (with FITQ_PREEMPTED_COUNT) once it was
 * preempted before: it may resume from the checkpoint it wrote then.
 */
export function attemptEnv(claim: Pick<ClaimedRun, 'attempt' | 'run'>): Record<string, string> {
  const env: Record<string, string> = {};
  if (claim.attempt !== undefined) env.FITQ_ATTEMPT = String(claim.attempt);
  const preempted = claim.run.preempted ?? 0;
  if (preempted > 0) Object.assign(env, { FITQ_PREEMPTED: '1', FITQ_PREEMPTED_COUNT: String(preempted) });
  return env;
}
