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

/**
 * Registers `key` (as fitq keys init prints it) for `user`, an admin or
 * not as `admin` says (as they were when undefined; none when new). Says
 * whether it replaced another key and whether the user is an admin now.
 */
export async function addUserKey(ctx: QueueContext, user: string, key: string, admin?: boolean): Promise<{ replaced: boolean; admin: boolean }> {
  const checked = formatPublicKey(parsePublicKey(key));
  return (await ctx.scripts.setUserKey(checkUserName(user, 'user'), 'add', checked, admin))!;
}

export async function removeUserKey(ctx: QueueContext, user: string): Promise<void> {
  if ((await ctx.scripts.setUserKey(checkUserName(user, 'user'), 'remove')) === undefined) throw new UsageError(`no key is registered for ${quote(user)}`);
}

/** Every registered key, by user, and whether the user is an admin. */
export async function listUserKeys({ redis, keys }: ReadContext): Promise<{ user: string; key: string; admin: boolean }[]> {
  const [all, admins] = await Promise.all([redis.hgetall(keys.userKeys), redis.smembers(keys.admins)]);
  const isAdmin = new Set(admins);
  return Object.keys(all).sort().map((user) => ({ user, key: all[user]!, admin: isAdmin.has(user) }));
}

/** Whether a registered user is an admin: their signed requests may change anyone's signed runs. */
export async function isAdmin({ redis, keys }: ReadContext, user: string): Promise<boolean> {
  return (await redis.sismember(keys.admins, user)) === 1;
}

/** The key registered for a user, if any. */
export async function readUserKey({ redis, keys }: ReadContext, user: string): Promise<string | undefined> {
  return (await redis.hget(keys.userKeys, user)) ?? undefined;
}
