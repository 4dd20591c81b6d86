import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { LogPrinter } from '../cli/log-printer.js';
import { readLogEntries } from '../operations/log-reads.js';
import { oneLine } from '../text/quote.js';
import { isEnded, type RunRecord } from '../model/run-record.js';
import { describeEnd, noOutputNote } from '../present/run-end.js';
import { EXIT } from '../exit-codes.js';
import { RUN_EXIT_RULE, runExitCode } from '../model/run-exit-code.js';

/** Entries read per round trip when printing a whole log. */
const PAGE = 1000;

export default class Logs extends FitqCommand {
  static override summary = "Print a run's output (stdout and stderr, its last 10,000 lines).";
  static override description =
    'Lines longer than 16,384 characters were stored in pieces, one per line; bytes that were not UTF-8 are shown as U+FFFD. ' +
    'A run that has no output because it waits or never started gets a note on stderr saying so, and so do lines not stored: how many, and why (a run keeps its last 10,000 lines: --output FILE on fitq stage keeps all of it). ' +
    `With -f the exit code is the run's, as for fitq wait: ${RUN_EXIT_RULE}; interrupted (Ctrl-C, SIGTERM) ${EXIT.interrupted}, the run goes on.`;
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
    const followed = await this.withClient(flags, async (client): Promise<RunRecord | undefined> => {
      const id = await client.resolveRunId(args.id); // an unknown, ambiguous or invalid id is refused
      const printer = new LogPrinter(client.logMaxLines);
      if (!flags.follow) {
        const run = await client.getRun(id);
        // Page by page, so a huge log is never held whole.
        for (let after = '0'; ; ) {
          const page = await readLogEntries(client, id, after, PAGE);
          page.forEach(printer.print);
          await printer.flushed(); // (a page at a time held, however slowly stdout is read)
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
      process.once('SIGTERM', onSignal);
      try {
        const run = await client.followLog(id, printer.print, abort.signal);
        await printer.flushed();
        return run;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
    if (!followed) return;
    if (!isEnded(followed)) {
      // Interrupted: the run goes on.
      process.stderr.write(`Interrupted: run ${followed.id} is ${followed.status} (fitq logs -f ${followed.id})\n`);
      return this.exit(EXIT.interrupted);
    }
    process.stderr.write(`${oneLine(describeEnd(followed))}\n`);
    const code = runExitCode(followed);
    if (code !== EXIT.ok) this.exit(code);
  }
}
