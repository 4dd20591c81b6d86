import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { resolveNamespace } from '../client.js';
import { UsageError } from '../errors.js';
import { comingBack } from '../redis/connection.js';
import { renderTop } from '../top/render.js';
import { readTopSnapshot } from '../top/snapshot.js';
import { runTop } from '../top/top-view.js';

/** Width of a frame printed with --once where no terminal says how wide it is. */
const ONCE_COLUMNS = 120;

export default class Top extends FitqCommand {
  static override summary = 'A live view of the queue in the terminal: workers with capacity bars and GPU devices, what runs and for how long, staged runs by shape with why the first waits.';
  static override description =
    'It reads again each time a run is staged, starts or ends and a worker joins or leaves; q or Ctrl-C quits. ' +
    'It fits the terminal (80×24 and up), cutting each part with "… N more"; Redis away is said above the last frame, which stays until Redis is back. ' +
    'With --once it prints one frame and exits, as `top -b -n 1` does, in a terminal or not.';
  static override examples = ['<%= config.bin %> top', '<%= config.bin %> top --queue gpu-box', '<%= config.bin %> top --once'];
  static override flags = {
    once: Flags.boolean({ summary: 'Print one frame, every line of it, and exit (no terminal needed).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Top);
    const { queue } = resolveNamespace({ queue: flags.queue });
    if (!flags.once && !(process.stdin.isTTY && process.stdout.isTTY)) {
      throw new UsageError('fitq top needs a terminal on stdin and stdout; to print one frame elsewhere: fitq top --once');
    }
    if (flags.once) {
      const lines = await this.withClient(flags, async (client) =>
        renderTop({ queue, snapshot: await readTopSnapshot(client), now: Date.now() }, { columns: process.stdout.columns || ONCE_COLUMNS, rows: Infinity }),
      );
      this.log(lines.join('\n'));
      return;
    }
    const { retryStrategy, up } = comingBack();
    await this.withClient(
      flags,
      (client) => {
        up();
        return runTop(client, this.connectionOptions(flags), queue, { input: process.stdin, output: process.stdout });
      },
      { redisOptions: { retryStrategy } },
    );
  }
}
