import { FitqCommand } from '../../cli/base-command.js';
import { quotaOwner, quotaOwnerFlags } from '../../cli/quota-owner.js';

export default class QuotaRm extends FitqCommand {
  static override summary = "Remove a user's quota (or the default one, or a project's), or some of its limits.";
  static override description = 'Runs waiting for the quota may start at once. Without names, the whole quota goes.';
  static override usage = 'quota rm USER|--default|--label project=NAME [LIMIT...]';
  static override strict = false;
  static override flags = quotaOwnerFlags;
  static override examples = ['<%= config.bin %> quota rm alice', '<%= config.bin %> quota rm alice gpu staged', '<%= config.bin %> quota rm --default'];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(QuotaRm);
    const { owner, rest } = quotaOwner(argv as string[], flags, 'rm');
    await this.withClient(flags, (client) => client.removeQuota(owner, rest));
    const whose = 'user' in owner ? `${owner.user}'s quota` : 'project' in owner ? `project ${owner.project}'s quota` : 'the default quota';
    this.log(rest.length === 0 ? `Removed ${whose}.` : `Removed ${rest.join(', ')} from ${whose}.`);
  }
}
