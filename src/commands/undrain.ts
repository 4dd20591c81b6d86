import { Args } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { describeDrain } from '../cli/drain.js';

export default class Undrain extends FitqCommand {
  static override summary = 'Undrain workers (fitq drain): they claim runs again.';
  static override strict = false;
  static override examples = ['<%= config.bin %> undrain gpu-box-1'];
  static override args = { names: Args.string({ description: 'Names of live workers (fitq workers).' }) };
  static override flags = { json: describeDrain.jsonFlag };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Undrain);
    const results = await this.withClient(flags, (client) => client.setDrained(argv as string[], false));
    describeDrain.print(this, results, flags.json, false);
  }
}
