import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { renderTable } from '../../cli/format.js';

export default class KeysLs extends FitqCommand {
  static override summary = "List users' registered public keys.";
  static override flags = { json: Flags.boolean({ summary: 'Print them as JSON.' }) };
  static override examples = ['<%= config.bin %> keys ls'];

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysLs);
    const keys = await this.withClient(flags, (client) => client.listUserKeys());
    if (flags.json) this.log(JSON.stringify(keys, null, 2));
    else if (keys.length === 0) this.log('No key is registered (fitq keys init, then fitq keys add USER KEY).');
    else this.log(renderTable(['USER', 'ROLE', 'KEY'], keys.map(({ user, key, admin }) => [user, admin ? 'admin' : 'user', key])));
  }
}
