import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';

export default class Notify extends FitqCommand {
  static override summary = "Show the namespace's notification URL: workers POST a run's record there when it ends.";
  static override description =
    'A run staged with --notify URL goes to its own URL instead. The payload and retries: docs/lifecycle.md, "Notifications". ' +
    'Set it with fitq notify set URL, clear it with fitq notify rm.';
  static override examples = ['<%= config.bin %> notify', '<%= config.bin %> notify --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print {"url": URL or null}.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(Notify);
    const url = await this.withClient(flags, (client) => client.getNotifyUrl());
    if (flags.json) this.log(JSON.stringify({ url: url ?? null }));
    else this.log(url === undefined ? 'No notification URL (fitq notify set URL)' : url);
  }
}
