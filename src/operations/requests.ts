/**
 * The requests an operation sends with a change to runs (cancel, hold,
 * release, update, restart, rm): signed with the caller's own key when that
 * key is the one registered for them, so that runs their user signed may
 * be changed by that user or an admin (security/request-signature.ts);
 * none otherwise, and such runs refuse the change saying who may.
 */
import { serverTimeMicros } from '../model/liveness.js';
import { publicKeyOf } from '../security/user-keys.js';
import { signRequest, type RequestOp } from '../security/request-signature.js';
import type { QueueContext } from './context.js';
import { readUserKey } from './user-keys.js';

/** The request for each run (`""`: none), by run id. */
export type RequestOf = (runId: string) => string;

const NO_REQUEST: RequestOf = () => '';

/** A signer of requests for `op`, made once per operation: one read of the registered key and of the server's clock. */
export async function requestSigner(ctx: QueueContext, op: RequestOp): Promise<RequestOf> {
  const key = ctx.userKey;
  if (key === undefined) return NO_REQUEST;
  const by = ctx.stager.user;
  // A key that is not the one registered for the caller proves nothing: its requests would be refused by workers.
  if ((await readUserKey(ctx, by)) !== publicKeyOf(key)) return NO_REQUEST;
  const at = serverTimeMicros(await ctx.redis.time());
  return (runId) => signRequest(key, ctx.keys.base, op, runId, by, at);
}
