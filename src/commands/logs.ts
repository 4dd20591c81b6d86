import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { LogPrinter } from '../cli/log-printer.js';
import { readLogEntries } from '../queue/logs.js';
import { oneLine } from '../queue/names.js';
import { isEnded } from '../queue/run-record.js';
import { describeEnd, followExitCode, FOLLOW_EXIT_CODES, noOutputNote } from '../cli/run-end.js';

/** Entries read per round trip when printing a whole log. */
const PAGE = 1000;

export default class Logs extends FitqCommand {
  static override summary = "Print a run's output (stdout and stderr, its last 10,000 lines).";
  static override description =
    'Lines longer than 16,384 characters were stored in pieces, one per line; bytes that were not UTF-8 are shown as U+FFFD. ' +
    'A run that has no output because it waits or never started gets a note on stderr saying so, and so do lines not stored: how many, and why (a run keeps its last 10,000 lines: --output FILE on fitq stage keeps all of it). ' +
    `With -f the exit code is the run's: 0 completed; failed: its exit code, 128 + the signal number, or 1; ` +
    Object.entries(FOLLOW_EXIT_CODES).map(([status, code]) => `${status} ${code}`).join(', ') + '.';
  static override examples = ['<%= config.bin %> logs 3f2a9c81d0e4', '<%= config.bin %> logs 3f2a9c81d0e4 -f'];
  static override args = { id: Args.string({ required: true, description: 'Run id, or a unique prefix of one.' }) };
  static override flags = {
    follow: Flags.boolean({
      char: 'f',
      summary: "Keep printing new output until the run ends, then say how it ended and exit with the run's exit code.",
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Logs);
    const ended = await this.withClient(flags, async (client) => {
      const id = await client.resolveRunId(args.id); // an unknown, ambiguous or invalid id is refused
      const printer = new LogPrinter(client.logMaxLines);
      if (!flags.follow) {
        const run = await client.getRun(id);
        // Page by page, so a huge log is never held whole.
        for (let after = '0'; ; ) {
          const page = await readLogEntries(client.redis, client.keys, id, after, PAGE);
          page.forEach(printer.print);
          if (page.length < PAGE) break;
          after = page[page.length - 1]!.id;
        }
        const note = noOutputNote(run, printer.printedLines);
        if (note) process.stderr.write(`${oneLine(note)}\n`);
        return undefined;
      }
      const abort = new AbortController();
      const onSignal = () => abort.abort();
      process.once('SIGINT', onSignal);
      try {
        const run = await client.followLog(id, printer.print, abort.signal);
        return isEnded(run) ? run : undefined; // not ended: interrupted
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
    if (!ended) return;
    process.stderr.write(`${oneLine(describeEnd(ended))}\n`);
    const code = followExitCode(ended);
    if (code !== 0) this.exit(code);
  }
}
