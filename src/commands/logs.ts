import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import type { LogEntry } from '../queue/logs.js';

export default class Logs extends FitqCommand {
  static override summary = "Print a run's output (stdout and stderr, the last 10,000 lines at least).";
  static override examples = ['<%= config.bin %> logs 3f2a9c81d0e4', '<%= config.bin %> logs 3f2a9c81d0e4 -f'];
  static override args = { id: Args.string({ required: true, description: 'Run id.' }) };
  static override flags = { follow: Flags.boolean({ char: 'f', summary: 'Keep printing new output until the run ends.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Logs);
    const print = (entry: LogEntry) => {
      if (entry.kind === 'restaged') process.stderr.write(`--- fitq: re-staged (${entry.reason}); the next attempt's output follows ---\n`);
      if (entry.kind !== 'line') return;
      (entry.stream === 'stderr' ? process.stderr : process.stdout).write(`${entry.line}\n`);
    };
    await this.withClient(flags, async (client) => {
      if (!flags.follow) {
        (await client.readLog(args.id)).forEach(print);
        return;
      }
      const abort = new AbortController();
      const onSignal = () => abort.abort();
      process.once('SIGINT', onSignal);
      try {
        await client.followLog(args.id, print, abort.signal);
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
  }
}
