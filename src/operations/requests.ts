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
import { quote } from '../text/quote.js';

/** The requests of one operation. */
export interface RequestSigner {
  /** The request for a run (`""`: none). */
  of(runId: string): string;
  /** Who asks, for a refusal to say: `you are 'bob'`, or why their requests are not signed. */
  readonly requester: string;
}

/** A signer of requests for `op`, made once per operation: one read of the registered key and of the server's clock. */
export async function requestSigner(ctx: QueueContext, op: RequestOp): Promise<RequestSigner> {
  const key = ctx.userKey;
  const by = ctx.stager.user;
  if (key === undefined) return { of: () => '', requester: `you, ${quote(by)}, have no key: fitq keys init` };
  // A key that is not the one registered for the caller proves nothing: its requests would be refused by workers.
  if ((await readUserKey(ctx, by)) !== publicKeyOf(key)) return { of: () => '', requester: `your key is not the one registered for ${quote(by)}` };
  const at = serverTimeMicros(await ctx.redis.time());
  return { of: (runId) => signRequest(key, ctx.keys.base, op, runId, by, at), requester: `you are ${quote(by)}` };
}
