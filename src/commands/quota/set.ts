import { FitqCommand } from '../../cli/base-command.js';
import { quotaOwner, quotaOwnerFlags } from '../../cli/quota-owner.js';
import { printQuotas } from './ls.js';

export default class QuotaSet extends FitqCommand {
  static override summary = "Set a user's quota, the default one, or a project's: the most runs and resources their runs may hold at once.";
  static override description =
    'running=N: most runs running at once. staged=N: most runs not ended (staged, held or running); a stage beyond it is refused. ' +
    'RESOURCE=AMOUNT: most of a resource their running runs hold at once, exactly. ' +
    'Checked in the claim, atomically with the reservation, for runs staged before the quota too; a run over it waits (fitq runs show: waiting for quota). ' +
    'Set merges with the quota there is; --default is the quota of every user without one of their own. ' +
    "--label project=NAME is a project's: runs labeled project=NAME count against it, whoever staged them, as well as against their user's.";
  static override usage = 'quota set USER|--default|--label project=NAME LIMIT=VALUE...';
  static override strict = false;
  static override flags = quotaOwnerFlags;
  static override examples = [
    '<%= config.bin %> quota set alice gpu=2 running=4 staged=1000',
    '<%= config.bin %> quota set --default gpu=1 running=2',
    '<%= config.bin %> quota set --label project=vision gpu=4 staged=500',
  ];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(QuotaSet);
    const { owner, rest } = quotaOwner(argv as string[], flags, 'set');
    const quota = await this.withClient(flags, (client) => client.setQuota(owner, rest));
    printQuotas(this, [quota]);
  }
}
