import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';

export default class Cancel extends FitqCommand {
  static override summary = 'Cancel a run: a staged one at once, a running one by stopping its process group.';
  static override description =
    'A running run gets SIGTERM on its process group, then SIGKILL after the worker\'s grace period, and ends as canceled.';
  static override examples = ['<%= config.bin %> cancel 3f2a9c81d0e4', '<%= config.bin %> cancel 3f2a9c81d0e4 --no-wait'];
  static override args = { id: Args.string({ required: true, description: 'Run id.' }) };
  static override flags = {
    wait: Flags.boolean({ summary: 'Wait until a running run has ended.', default: true, allowNo: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Cancel);
    const run = await this.withClient(flags, (client) => client.cancelRun(args.id, { wait: flags.wait }));
    this.log(run.status === 'running' ? `Cancel requested for run ${run.id}` : `Run ${run.id} ${run.status}`);
  }
}
