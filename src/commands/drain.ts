import { Args } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { describeDrain } from '../cli/drain.js';

export default class Drain extends FitqCommand {
  static override summary = 'Drain workers: each finishes what it runs and claims nothing more, without exiting.';
  static override description =
    'Works on workers on any machine, through Redis. A drained worker also lets go of the run it held resources for, ' +
    'so another worker may hold it. fitq workers shows it draining while its runs finish, then drained; fitq undrain reverses it. ' +
    'The drain belongs to the running worker process: it stays drained if it registers again (after a lost lease), ' +
    'but a new worker started under the same name is not drained. To stop it instead: fitq stop.';
  static override strict = false;
  static override examples = ['<%= config.bin %> drain gpu-box-1', '<%= config.bin %> drain gpu-box-1 gpu-box-2 --json'];
  static override args = { names: Args.string({ description: 'Names of live workers (fitq workers).' }) };
  static override flags = { json: describeDrain.jsonFlag };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Drain);
    const results = await this.withClient(flags, (client) => client.setDrained(argv as string[], true));
    describeDrain.print(this, results, flags.json, true);
  }
}
