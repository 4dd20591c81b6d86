import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';

export default class NotifySet extends FitqCommand {
  static override summary = "Set the namespace's notification URL (http or https): workers POST a run's record there when it ends.";
  static override description = 'Runs staged with --notify URL go to their own URL instead. Workers pick up the change at once; each sends only where its --notify-allow lets it (a worker with a secret: nowhere without it).';
  static override examples = ['<%= config.bin %> notify set https://hooks.example.com/fitq'];
  static override args = { url: Args.string({ required: true, description: 'An http:// or https:// URL, without a user name or password.' }) };
  static override flags = { json: Flags.boolean({ summary: 'Print {"url": URL}.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(NotifySet);
    await this.withClient(flags, (client) => client.setNotifyUrl(args.url));
    this.log(flags.json ? JSON.stringify({ url: args.url }) : `Runs that end now notify ${args.url}`);
  }
}
