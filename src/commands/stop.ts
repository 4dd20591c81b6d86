import { Args, Flags } from '@oclif/core';
import { localDetachedWorkers, removePidfileOf } from '../cli/detach.js';
import { FitqCommand, inBatches } from '../cli/base-command.js';
import { UsageError } from '../errors.js';
import { resolveNamespace } from '../client.js';

export default class Stop extends FitqCommand {
  static override summary = 'Stop workers, on any machine, through Redis: their runs finish first, or with --now are terminated.';
  static override description =
    'Without NAME, stops the workers started with `fitq worker --detach` on this machine (for this queue). Waits until they have left, unless --no-wait.';
  static override strict = false;
  static override usage = 'stop [NAME...] [--now] [--all] [--no-wait] [--timeout SECONDS]';
  static override examples = [
    '<%= config.bin %> stop gpu-box-1',
    '<%= config.bin %> stop gpu-box-1 gpu-box-2 --now',
    '<%= config.bin %> stop --all',
    '<%= config.bin %> stop',
  ];
  static override args = { name: Args.string({ description: 'Worker name (repeatable).' }) };
  static override flags = {
    now: Flags.boolean({ summary: 'Terminate the runs first (SIGTERM to each process group, SIGKILL after the grace period).' }),
    all: Flags.boolean({ summary: 'Stop every live worker of the queue.' }),
    wait: Flags.boolean({ summary: 'Wait until the workers have left.', default: true, allowNo: true }),
    timeout: Flags.integer({ summary: 'Seconds to wait before giving up (exit 1).', default: 600 }),
  };

  async run(): Promise<void> {
    const { flags, argv } = await this.parse(Stop);
    const given = argv.map(String);
    if (flags.all && given.length > 0) throw new UsageError('give worker names or --all, not both');
    if (flags.timeout < 0) throw new UsageError(`expected --timeout to be a number of seconds, got '${flags.timeout}'`);
    const { queue } = resolveNamespace({ queue: flags.queue });
    await this.withClient(flags, async (client) => {
      let names = given;
      if (flags.all) names = (await client.listWorkers()).map((worker) => worker.name);
      else if (names.length === 0) {
        const { live, stale } = localDetachedWorkers(queue);
        // Left by a worker killed (kill -9) or a machine restarted: not a worker to stop.
        for (const worker of stale) {
          removePidfileOf(worker.pidfile, worker.pid);
          process.stderr.write(`Removed stale pidfile ${worker.pidfile}: worker ${worker.name} (pid ${worker.pid}) is not running\n`);
        }
        names = live.map((worker) => worker.name);
        if (names.length === 0) {
          throw new UsageError(`no worker named, and no background worker of queue '${queue}' runs on this machine`);
        }
      }
      if (names.length === 0) {
        this.log('No live workers');
        return;
      }
      await client.stopWorkers(names, { now: flags.now, wait: flags.wait, timeoutMs: flags.timeout * 1000 });
      for (const name of names) this.log(flags.wait ? `Stopped worker ${name}` : `Asked worker ${name} to stop`);
    });
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: stop every worker with --all, or name them ${inBatches('stop')}`;
  }
}
