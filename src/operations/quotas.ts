/**
 * Users' quotas (`fitq quota set|ls|rm`): the most runs a user may have
 * running or not ended, and the most of each resource their running runs
 * may hold. Set and removed in one script call each (setQuota-*.lua); the
 * claim checks them (lua/includes/quotas/) atomically with the reservation.
 */
import { UsageError } from '../errors.js';
import { checkUserName } from '../model/stager.js';
import { decodeQuota, decodeUsage, DEFAULT_QUOTA_USER, parseQuota, quotaField, quotaFields, type Quota, type UserUsage } from '../model/quota.js';
import { quote } from '../text/quote.js';
import { checkProject, projectOwner } from '../model/project.js';
import type { QueueContext, ReadContext } from './context.js';

/** Whose quota: a user, the default (every user's without one of their own), or a project (model/project.ts). */
export type QuotaOwner = { user: string } | { default: true } | { project: string };

export interface UserQuota {
  /** The user, or DEFAULT_QUOTA_USER for the default. */
  user: string;
  quota: Quota;
  /** What the user's runs hold now (the default: nothing of its own). */
  usage: UserUsage;
}

function ownerKey(owner: QuotaOwner): string {
  if ('user' in owner) return checkUserName(owner.user, 'user');
  return 'project' in owner ? projectOwner(checkProject(owner.project)) : DEFAULT_QUOTA_USER;
}

/** Sets (merges) a quota; `specs` as typed: `running=4 staged=1000 gpu=2`. */
export async function setQuota(ctx: QueueContext, owner: QuotaOwner, specs: readonly string[]): Promise<UserQuota> {
  const user = ownerKey(owner);
  await ctx.scripts.setQuota(user, 'set', quotaFields(parseQuota(specs)));
  return readQuota(ctx, user);
}

/** Removes a quota, or some of its limits (`running`, `staged`, resource names); a UsageError when there was none such. */
export async function removeQuota(ctx: QueueContext, owner: QuotaOwner, names: readonly string[] = []): Promise<void> {
  const user = ownerKey(owner);
  if (!(await ctx.scripts.setQuota(user, 'remove', names.map(quotaField)))) {
    const whose = user === DEFAULT_QUOTA_USER ? 'the default quota' : `the quota of ${quote(user)}`;
    throw new UsageError(names.length === 0 ? `no quota is set for ${user === DEFAULT_QUOTA_USER ? 'the default' : quote(user)}` : `${whose} bounds none of: ${names.join(', ')}`);
  }
}

async function readQuota({ redis, keys }: ReadContext, user: string): Promise<UserQuota> {
  const [quota, usage] = await Promise.all([redis.hgetall(keys.quota(user)), redis.hgetall(keys.userUsage(user))]);
  return { user, quota: decodeQuota(quota), usage: decodeUsage(usage) };
}

/** Every quota, the default first, then by user, each with what the user's runs hold now. */
export async function listQuotas(ctx: ReadContext): Promise<UserQuota[]> {
  const users = (await ctx.redis.smembers(ctx.keys.quotas)).sort((a, b) => (a === DEFAULT_QUOTA_USER ? -1 : b === DEFAULT_QUOTA_USER ? 1 : a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(users.map((user) => readQuota(ctx, user)));
}
