import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { renderTable } from '../../cli/format.js';
import { DEFAULT_QUOTA_USER, formatQuota } from '../../model/quota.js';
import type { UserQuota } from '../../operations/quotas.js';
import { formatMicros } from '../../resources/amount.js';
import { projectOfOwner } from '../../model/project.js';

export default class QuotaLs extends FitqCommand {
  static override summary = "List users' and projects' quotas, with what each one's runs hold now.";
  static override examples = ['<%= config.bin %> quota ls', '<%= config.bin %> quota ls --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print the quotas as JSON.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(QuotaLs);
    const quotas = await this.withClient(flags, (client) => client.listQuotas());
    if (flags.json) {
      this.log(JSON.stringify(quotas.map(quotaJson), null, 2));
      return;
    }
    printQuotas(this, quotas);
  }
}

const amounts = (resources: ReadonlyMap<string, bigint>): Record<string, number> =>
  Object.fromEntries([...resources].map(([name, micros]) => [name, Number(formatMicros(micros))]));

/** A quota as `fitq quota ls --json` prints it: the user or project (`default`: true for the default), its limits, what their runs hold. */
function quotaJson({ user, quota, usage }: UserQuota): Record<string, unknown> {
  const isDefault = user === DEFAULT_QUOTA_USER;
  const project = projectOfOwner(user);
  return {
    ...(isDefault ? { default: true } : project !== undefined ? { project } : { user }),
    quota: { ...(quota.running === undefined ? {} : { running: quota.running }), ...(quota.staged === undefined ? {} : { staged: quota.staged }), resources: amounts(quota.resources) },
    ...(isDefault ? {} : { usage: { running: usage.running, notEnded: usage.open, resources: amounts(usage.resources) } }),
  };
}

/** `gpu=1.5/2`: what the user holds of each limited resource, against the limit. */
function heldText({ user, quota, usage }: UserQuota): string {
  if (user === DEFAULT_QUOTA_USER) return '';
  const parts = [`running=${usage.running}${quota.running === undefined ? '' : `/${quota.running}`}`, `staged=${usage.open}${quota.staged === undefined ? '' : `/${quota.staged}`}`];
  for (const [name, limit] of quota.resources) parts.push(`${name}=${formatMicros(usage.resources.get(name) ?? 0n)}/${formatMicros(limit)}`);
  return parts.join(' ');
}

/** Quotas in a table: USER, QUOTA (as typed), USING (held/limit; staged counts runs not ended). */
export function printQuotas(command: { log(message: string): void }, quotas: readonly UserQuota[]): void {
  if (quotas.length === 0) {
    command.log('No quota is set (fitq quota set USER|--default|--label project=NAME running=N staged=N RESOURCE=AMOUNT...).');
    return;
  }
  command.log(renderTable(
    ['USER', 'QUOTA', 'USING'],
    quotas.map((entry) => [entry.user === DEFAULT_QUOTA_USER ? '(default)' : entry.user, formatQuota(entry.quota), heldText(entry)]),
  ));
}
