import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';

export default class NotifyRm extends FitqCommand {
  static override summary = "Clear the namespace's notification URL (runs staged with --notify keep theirs).";
  static override examples = ['<%= config.bin %> notify rm'];
  static override flags = { json: Flags.boolean({ summary: 'Print {"url": null, "changed": true|false}.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(NotifyRm);
    const changed = await this.withClient(flags, (client) => client.setNotifyUrl(null));
    this.log(flags.json ? JSON.stringify({ url: null, changed }) : changed ? 'Notification URL cleared' : 'No notification URL was set');
  }
}
