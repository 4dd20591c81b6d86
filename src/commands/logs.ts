import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { readLogEntries, type LogEntry } from '../queue/logs.js';

/** Entries read per round trip when printing a whole log. */
const PAGE = 1000;

export default class Logs extends FitqCommand {
  static override summary = "Print a run's output (stdout and stderr, the last 10,000 lines at least).";
  static override description =
    'Lines longer than 16,384 characters were stored in pieces, one per line; bytes that were not UTF-8 are shown as U+FFFD.';
  static override examples = ['<%= config.bin %> logs 3f2a9c81d0e4', '<%= config.bin %> logs 3f2a9c81d0e4 -f'];
  static override args = { id: Args.string({ required: true, description: 'Run id, or a unique prefix of one.' }) };
  static override flags = { follow: Flags.boolean({ char: 'f', summary: 'Keep printing new output until the run ends.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Logs);
    const print = (entry: LogEntry) => {
      if (entry.kind === 'restaged') process.stderr.write(`--- fitq: re-staged (${entry.reason}); the next attempt's output follows ---\n`);
      if (entry.kind !== 'line') return;
      (entry.stream === 'stderr' ? process.stderr : process.stdout).write(`${entry.line}\n`);
    };
    await this.withClient(flags, async (client) => {
      const id = await client.resolveRunId(args.id); // an unknown, ambiguous or invalid id is refused
      if (!flags.follow) {
        // Page by page, so a huge log is never held whole.
        for (let after = '0'; ; ) {
          const page = await readLogEntries(client.redis, client.keys, id, after, PAGE);
          page.forEach(print);
          if (page.length < PAGE) return;
          after = page[page.length - 1]!.id;
        }
      }
      const abort = new AbortController();
      const onSignal = () => abort.abort();
      process.once('SIGINT', onSignal);
      try {
        await client.followLog(id, print, abort.signal);
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
  }
}
