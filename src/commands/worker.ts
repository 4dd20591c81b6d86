import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { UsageError } from '../errors.js';
import { resolveWorkerResources } from '../worker/resource-sources.js';
import { startWorker } from '../worker/worker.js';

export default class Worker extends FitqCommand {
  static override summary = 'Start a worker: it runs staged runs whose demands fit its remaining capacity.';
  static override examples = [
    '<%= config.bin %> worker -r foo=7 --run-once',
    '<%= config.bin %> worker -r "gpu=2 mem=64G" --name gpu-box-1 --concurrency 8',
  ];
  static override flags = {
    resources: Flags.string({
      char: 'r',
      multiple: true,
      summary: 'Capacity, NAME=VALUE pairs separated by spaces or commas (repeatable, merged).',
      description:
        'Also read from FITQ_RESOURCES="gpu=2 mem=64G", FITQ_RESOURCES__GPU=2 and the config file ($FITQ_CONFIG or ~/.config/fitq/config.json); flags win over the environment, the environment over the file, name by name.',
    }),
    name: Flags.string({ summary: 'Worker name, unique among live workers. Default: hostname-pid.' }),
    concurrency: Flags.integer({ summary: 'Most runs at once; 0 = no limit. Default: number of CPU cores.' }),
    'run-once': Flags.boolean({ summary: 'Run everything that fits, wait for it, exit when no staged run fits.' }),
    'log-format': Flags.string({ options: ['pretty', 'json'], default: 'pretty', summary: 'Log format.' }),
    gpus: Flags.string({
      summary: 'GPU devices to assign runs to: auto (nvidia-smi), none, or indices like 0,1,3. Sets gpu=<count>.',
      default: 'none',
    }),
    policy: Flags.string({
      options: ['backfill', 'fifo'],
      default: 'backfill',
      summary: 'backfill: start whatever fits without starving the next run in line; fifo: strict order.',
    }),
    lease: Flags.string({
      summary: 'Seconds without a heartbeat after which the worker counts as dead and its runs as lost.',
      default: '30',
    }),
    'kill-grace': Flags.string({ summary: 'Seconds between SIGTERM and SIGKILL when runs are stopped.', default: '10' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Worker);
    const { resources, sources } = resolveWorkerResources(flags.resources ?? []);
    const worker = await startWorker({
      redisUrl: flags['redis-url'],
      queue: flags.queue,
      resources,
      resourceSources: sources,
      name: flags.name,
      concurrency: flags.concurrency,
      runOnce: flags['run-once'],
      policy: flags.policy as 'backfill' | 'fifo',
      gpus: flags.gpus,
      logFormat: flags['log-format'] as 'pretty' | 'json',
      leaseMs: secondsFlag('--lease', flags.lease) * 1000,
      killGraceMs: secondsFlag('--kill-grace', flags['kill-grace']) * 1000,
    });
    let signals = 0;
    const onSignal = () => {
      signals += 1;
      // First signal: finish what runs. Second: terminate the runs too.
      void worker.stop({ now: signals > 1 });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    await worker.done;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (worker.failure) {
      process.stderr.write(`Error: ${worker.failure}\n`);
      this.exit(1);
    }
  }
}

function secondsFlag(flag: string, value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(`expected ${flag} to be a number of seconds, got '${value}'`);
  }
  return seconds;
}
