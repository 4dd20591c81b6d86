/**
 * Typed calls of the scripts that change a namespace's settings: pause,
 * pool, quotas, fair share, users' keys, retention, notifications.
 */
import { flatToRecord } from './claim-reply.js';
import { acceptReply, codeName } from './script-codes.js';
import { ScriptCaller } from './script-caller.js';
import { parseFairShareReply, type FairShareOp, type FairShareState } from '../model/fair-share.js';

export class SettingsScripts extends ScriptCaller {
  /** Pauses or resumes the namespace's queue; false when it already was so. */
  async setPaused(paused: boolean): Promise<boolean> {
    const reply = await this.call('setPaused', {}, this.keys.base, paused ? 'pause' : 'resume');
    return codeName(reply) === 'ok';
  }

  /** Sets pool capacities ("set"), or removes pool resources ("remove"; a name not in the pool is refused). */
  async setPool(action: 'set' | 'remove', args: string[]): Promise<void> {
    const [code, value] = (await this.call('setPool', {}, this.keys.base, action, args)) as [number, string?];
    acceptReply(code, value, this.keys);
  }

  /** Sets (merges) or removes a user's quota fields (model/quota.ts); remove: false when nothing was there. */
  async setQuota(user: string, action: 'set' | 'remove', fields: string[]): Promise<boolean> {
    return codeName(await this.call('setQuota', {}, this.keys.base, user, action, fields)) === 'ok';
  }

  /** Changes fair share: ops as setFairShare-2.lua takes them (model/fair-share.ts builds them). */
  async setFairShare(ops: readonly FairShareOp[]): Promise<void> {
    await this.call('setFairShare', {}, this.keys.base, ops.flatMap((op) => [op.op, op.field, op.value ?? '']));
  }

  /** Fair share as the claim sees it now. */
  async readFairShare(): Promise<FairShareState> {
    return parseFairShareReply(await this.call('readFairShare', {}, this.keys.base));
  }

  /**
   * Registers a user's public key (`admin`: made an admin or none; left as
   * it was when undefined), or removes it. Says whether add replaced another
   * key and whether the user is an admin now; remove: undefined when there
   * was no key.
   */
  async setUserKey(user: string, action: 'add' | 'remove', key = '', admin?: boolean): Promise<{ replaced: boolean; admin: boolean } | undefined> {
    const role = admin === undefined ? '' : admin ? 'admin' : 'user';
    const [code, replaced, isAdmin] = (await this.call('setUserKey', {}, user, action, key, role)) as [number, number?, number?];
    return codeName(code) === 'ok' ? { replaced: replaced === 1, admin: isAdmin === 1 } : undefined;
  }

  /** Writes retention settings (value "" = back to the default); returns the settings hash as stored now. */
  async setRetention(values: readonly (readonly [string, string])[]): Promise<Record<string, string>> {
    const flat = (await this.call('setRetention', {}, this.keys.base, values.flat())) as string[];
    return flatToRecord(flat);
  }

  /** Sets (or, with "", clears) the namespace's notification URL; whether it changed. */
  async setNotify(url: string): Promise<boolean> {
    return codeName(await this.call('setNotify', {}, this.keys.base, url)) === 'ok';
  }
}
