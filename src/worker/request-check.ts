/**
 * With --require-signed, the worker proves what others asked of the runs
 * it runs (security/request-signature.ts): the scripts admit a change to a
 * signed run only at a request naming its user or an admin, and record it
 * (`lastRequest`), but cannot check a signature; the worker does, before it
 * acts. A cancel it cannot prove is refused (recorded as such, the run runs
 * on); a run whose release or restart it cannot prove is not started.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { NamespaceKeys } from '../queue/keys.js';
import type { WorkerScripts } from '../queue/worker-scripts.js';
import { isAdmin, readUserKey } from '../operations/user-keys.js';
import { LAST_REQUEST_FIELD, START_REQUEST_FIELD, verifyRequest } from '../security/request-signature.js';

export interface RequestCheck {
  /** Why a run may not start: the release or restart that let it start is not proven (undefined: it may). */
  startRefusal(runId: string, owner: string | undefined): Promise<string | undefined>;
  /** Why a cancel recorded on a running run is refused (undefined: it is proven); a refused one is recorded so, and its cancellation dropped. */
  cancelRefusal(runId: string, owner: string | undefined): Promise<string | undefined>;
}

export function requestCheck(redis: RedisConnection, keys: NamespaceKeys, scripts: WorkerScripts): RequestCheck {
  const context = { redis, keys };
  const judge = async (runId: string, owner: string | undefined, recorded: string) => {
    return verifyRequest(
      recorded,
      { namespace: keys.base, runId, owner: owner ?? '' },
      (user) => readUserKey(context, user),
      (user) => isAdmin(context, user),
    );
  };
  return {
    async startRefusal(runId, owner) {
      // The release or restart that let it start, if any (a cancel or hold never does).
      const recorded = await redis.hget(keys.run(runId), START_REQUEST_FIELD);
      if (!recorded) return undefined;
      const verdict = await judge(runId, owner, recorded);
      return verdict.ok ? undefined : `rejected: the ${recorded.split(' ')[0]} that let it start is not proven (${verdict.reason})`;
    },
    async cancelRefusal(runId, owner) {
      const recorded = await redis.hget(keys.run(runId), LAST_REQUEST_FIELD);
      const verdict = recorded ? await judge(runId, owner, recorded) : { ok: false as const, reason: 'no request is recorded for it' };
      if (verdict.ok && recorded!.startsWith('cancel ')) return undefined;
      const why = verdict.ok ? `the request recorded is no cancel (${recorded!.split(' ')[0]})` : verdict.reason;
      await scripts.refuseRequest(runId, recorded ?? '', why);
      return why;
    },
  };
}
