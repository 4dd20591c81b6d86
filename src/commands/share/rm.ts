import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { printFairShare } from './index.js';

export default class ShareRm extends FitqCommand {
  static override summary = "Remove users' shares (back to 1), or weights (back to their defaults).";
  static override usage = 'share rm [USER...] [--weight RESOURCE...]';
  static override strict = false;
  static override flags = {
    weight: Flags.string({ summary: 'A weight to remove (back to its default).', multiple: true }),
  };
  static override examples = ['<%= config.bin %> share rm alice', '<%= config.bin %> share rm --weight mem'];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(ShareRm);
    const state = await this.withClient(flags, (client) => client.changeFairShare({ removeShares: argv as string[], removeWeights: flags.weight ?? [] }));
    printFairShare(this, state);
  }
}
