import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { runDetailLines } from '../../present/run-details.js';

export default class RunsShow extends FitqCommand {
  static override summary = 'Show one run in full.';
  static override examples = ['<%= config.bin %> runs show 3f2a9c81d0e4', '<%= config.bin %> runs show 3f2a9c81d0e4 --json'];
  static override args = { id: Args.string({ required: true, description: 'Run id, or a unique prefix of one.' }) };
  static override flags = { json: Flags.boolean({ summary: 'Print the run as JSON.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(RunsShow);
    const run = await this.withClient(flags, async (client) => client.getRun(await client.resolveRunId(args.id)));
    if (flags.json) {
      this.log(JSON.stringify(run, null, 2));
      return;
    }
    for (const line of runDetailLines(run)) this.log(line);
  }
}
