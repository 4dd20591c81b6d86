import { Args } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';

export default class KeysRm extends FitqCommand {
  static override summary = "Remove a user's registered key: workers with --require-signed start none of their runs until one is registered again.";
  static override args = { user: Args.string({ description: 'The user.', required: true }) };
  static override examples = ['<%= config.bin %> keys rm alice'];

  async run(): Promise<void> {
    const { args, flags } = await this.parse(KeysRm);
    await this.withClient(flags, (client) => client.removeUserKey(args.user));
    this.log(`Removed the key of ${args.user}.`);
  }
}
