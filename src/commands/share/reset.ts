import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { UsageError } from '../../errors.js';
import { printFairShare } from './index.js';

export default class ShareReset extends FitqCommand {
  static override summary = "Forget users' usage: their runs count from now on, as if they had used nothing.";
  static override usage = 'share reset USER...|--all';
  static override strict = false;
  static override flags = { all: Flags.boolean({ summary: "Forget every user's usage." }) };
  static override examples = ['<%= config.bin %> share reset alice', '<%= config.bin %> share reset --all'];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(ShareReset);
    const users = argv as string[];
    if (Boolean(flags.all) === (users.length > 0)) throw new UsageError('name the users whose usage to forget, or --all (not both)');
    const state = await this.withClient(flags, (client) => client.changeFairShare({ forget: flags.all ? 'all' : users }));
    printFairShare(this, state);
  }
}
