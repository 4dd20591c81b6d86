/**
 * Registered keys (`fitq keys add|rm|ls`): the public key that proves a
 * user's runs are theirs (security/user-keys.ts). Registering is an admin's
 * act: whoever may write the namespace's keys.
 */
import { UsageError } from '../errors.js';
import { checkUserName } from '../model/stager.js';
import { formatPublicKey, parsePublicKey } from '../security/user-keys.js';
import { quote } from '../text/quote.js';
import type { QueueContext, ReadContext } from './context.js';

/** Registers `key` (as fitq keys init prints it) for `user`; true when it replaced another. */
export async function addUserKey(ctx: QueueContext, user: string, key: string): Promise<boolean> {
  const checked = formatPublicKey(parsePublicKey(key));
  return (await ctx.scripts.setUserKey(checkUserName(user, 'user'), 'add', checked)) === true;
}

export async function removeUserKey(ctx: QueueContext, user: string): Promise<void> {
  if ((await ctx.scripts.setUserKey(checkUserName(user, 'user'), 'remove')) === undefined) throw new UsageError(`no key is registered for ${quote(user)}`);
}

/** Every registered key, by user. */
export async function listUserKeys({ redis, keys }: ReadContext): Promise<{ user: string; key: string }[]> {
  const all = await redis.hgetall(keys.userKeys);
  return Object.keys(all).sort().map((user) => ({ user, key: all[user]! }));
}

/** The key registered for a user, if any. */
export async function readUserKey({ redis, keys }: ReadContext, user: string): Promise<string | undefined> {
  return (await redis.hget(keys.userKeys, user)) ?? undefined;
}
