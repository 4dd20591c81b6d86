/**
 * Whose quota a `fitq quota` command names: a user (its first word),
 * `--default`, or a project (`--label project=NAME`): exactly one.
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { PROJECT_LABEL } from '../model/project.js';
import type { QuotaOwner } from '../operations/quotas.js';
import { quote } from '../text/quote.js';

export const quotaOwnerFlags = {
  default: Flags.boolean({ summary: "The default quota: every user's without a quota of their own." }),
  label: Flags.string({
    summary: `A project's quota: --label ${PROJECT_LABEL}=NAME. Every run labeled so counts against it, whoever staged it, besides its user's quota.`,
  }),
};

const USAGE = (command: string) => `fitq quota ${command} USER|--default|--label ${PROJECT_LABEL}=NAME …`;

/** The owner and the words after it. */
export function quotaOwner(words: readonly string[], flags: { default?: boolean; label?: string | undefined }, command: string): { owner: QuotaOwner; rest: string[] } {
  if (flags.default && flags.label !== undefined) throw new UsageError(`give --default or --label, not both: ${USAGE(command)}`);
  if (flags.default) return { owner: { default: true }, rest: [...words] };
  if (flags.label !== undefined) {
    const [key, ...value] = flags.label.split('=');
    if (key !== PROJECT_LABEL || value.length === 0) {
      throw new UsageError(`--label ${quote(flags.label)}: quotas are per user or per project, --label ${PROJECT_LABEL}=NAME`);
    }
    return { owner: { project: value.join('=') }, rest: [...words] };
  }
  const [user, ...rest] = words;
  if (user === undefined) throw new UsageError(`name the user (or --default, or --label ${PROJECT_LABEL}=NAME): ${USAGE(command)}`);
  if (user.includes('=')) throw new UsageError(`name the user first (or --default, or --label ${PROJECT_LABEL}=NAME), got ${JSON.stringify(user)}: ${USAGE(command)}`);
  return { owner: { user }, rest };
}
