/**
 * Whose quota a `fitq quota` command names: a user (its first word) or
 * `--default`, never both, never neither.
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import type { QuotaOwner } from '../operations/quotas.js';

export const quotaOwnerFlags = {
  default: Flags.boolean({ summary: "The default quota: every user's without a quota of their own." }),
};

/** The owner and the words after it. */
export function quotaOwner(words: readonly string[], isDefault: boolean, command: string): { owner: QuotaOwner; rest: string[] } {
  if (isDefault) return { owner: { default: true }, rest: [...words] };
  const [user, ...rest] = words;
  if (user === undefined) throw new UsageError(`name the user (or --default): fitq quota ${command} USER|--default …`);
  if (user.includes('=')) throw new UsageError(`name the user first (or --default), got ${JSON.stringify(user)}: fitq quota ${command} USER|--default …`);
  return { owner: { user }, rest };
}
