import { Flags } from '@oclif/core';
import { replicaWaitFlags, replicaWaitOf } from '../cli/replica-wait-flags.js';
import { FitqCommand } from '../cli/base-command.js';
import { adoptDetachedFiles, adoptOwnDetachedFiles, failureOf, keepFailedLog, removePidfileOnExit, spawnDetachedWorker } from '../cli/detach.js';
import { TimeoutError, UsageError } from '../errors.js';
import { cliSecret } from '../security/secret.js';
import { resolveNamespace } from '../client.js';
import { resolveWorkerResources } from '../worker/resource-sources.js';
import { parseDuration, parseTimeLimit } from '../units/duration.js';
import { printWarning } from '../cli/format.js';
import { parsePort } from '../units/port.js';

/** --default-time-limit and --max-time-limit, in ms. */
function workerTimeLimits(flags: { 'default-time-limit'?: string | undefined; 'max-time-limit'?: string | undefined }): {
  defaultTimeLimitMs?: number;
  maxTimeLimitMs?: number;
} {
  const given = (flag: string, text: string | undefined) => (text === undefined ? undefined : parseTimeLimit(flag, text, printWarning));
  const defaultTimeLimitMs = given('--default-time-limit', flags['default-time-limit']);
  const maxTimeLimitMs = given('--max-time-limit', flags['max-time-limit']);
  return { ...(defaultTimeLimitMs !== undefined ? { defaultTimeLimitMs } : {}), ...(maxTimeLimitMs !== undefined ? { maxTimeLimitMs } : {}) };
}

export default class Worker extends FitqCommand {
  static override summary = 'Start a worker: it runs staged runs whose demands fit its remaining capacity.';
  static override description =
    'It declares its capacity (-r, --gpus) in Redis and claims, in one atomic script call, the first staged run in order that fits what it has left ' +
    '(--policy), reserving its demands until the run ends. GPU runs get device indices in CUDA_VISIBLE_DEVICES. It renews a lease while alive: ' +
    'past --lease without a heartbeat it counts as dead and its runs as lost (or staged again, with --retries). ' +
    'It runs in the foreground until SIGINT/SIGTERM or `fitq stop` (its runs finish first; a second signal terminates them), or detached with --detach.';
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
    concurrency: Flags.integer({
      summary:
        'Most runs at once; 0 = no limit. Default: with capacity (-r, --gpus) it limits the runs, and of runs that demand nothing at most the number of CPU cores run at once; without, the number of CPU cores.',
    }),
    'run-once': Flags.boolean({ summary: 'Run everything that fits, wait for it, exit when no staged run fits.' }),
    'log-format': Flags.string({ options: ['pretty', 'json'], default: 'pretty', summary: 'Log format.' }),
    gpus: Flags.string({
      summary: 'GPU devices to assign runs to: auto (nvidia-smi, else amd-smi or rocm-smi), none, or indices like 0,1,3. Sets gpu=<count>.',
      default: 'none',
    }),
    policy: Flags.string({
      options: ['backfill', 'fifo'],
      default: 'backfill',
      summary: 'backfill: start whatever fits without starving the next run in line; fifo: strict order.',
    }),
    'gpu-placement': Flags.string({
      options: ['pack', 'spread'],
      default: 'pack',
      summary: 'Where a fractional gpu run goes: pack onto the fullest device that fits (keeps whole devices free), or spread onto the emptiest.',
    }),
    'gpu-probe-interval': Flags.string({
      summary: 'How often to ask nvidia-smi what the GPU devices hold (5s, 1m, or seconds); 0: never, trust fitq\'s own bookkeeping.',
      description: 'A device holding a compute process fitq did not start is busy, one nvidia-smi cannot reach is lost: neither takes a run until that changes. ' +
        'Off by itself when nvidia-smi is not on PATH.',
      default: '5s',
    }),
    'gpu-ignore-process': Flags.string({
      summary: 'A compute process (name or pid) that leaves a GPU device usable, such as a display server. Repeatable.',
      multiple: true,
    }),
    'gpu-foreign': Flags.string({
      options: ['busy', 'ignore'],
      default: 'busy',
      summary: 'busy: a device holding a process fitq did not start takes no run; ignore: trust fitq\'s own bookkeeping only.',
    }),
    lease: Flags.string({
      summary: 'Seconds without a heartbeat after which the worker counts as dead and its runs as lost.',
      default: '30',
    }),
    'kill-grace': Flags.string({ summary: 'Seconds between SIGTERM and SIGKILL when runs are stopped.', default: '10' }),
    'default-time-limit': Flags.string({
      summary: 'Time limit of runs staged without one (2h, HH:MM:SS, D-HH:MM:SS or seconds, as fitq stage --time-limit).',
    }),
    'max-time-limit': Flags.string({
      summary: 'Never claim runs with a longer time limit; runs staged without one get the default, else this.',
    }),
    'secret-file': Flags.string({
      summary: 'Require runs signed with the shared secret in this file; others end rejected and never start.',
      description: 'Default: the file named by FITQ_SECRET_FILE, else the secret in FITQ_SECRET; none: every run runs, signed or not.',
    }),
    'require-signed': Flags.boolean({
      summary: "Run only runs signed by their user's registered key (fitq keys init, fitq keys add); others end rejected and never start.",
    }),
    'pass-redis-env': Flags.boolean({
      summary: "Give runs this worker's Redis connection settings (URL with its password, TLS files), e.g. to stage runs themselves.",
      description:
        'Without it, runs get none of FITQ_REDIS_URL, REDIS_URL, FITQ_REDIS_SENTINEL_USERNAME, FITQ_REDIS_SENTINEL_PASSWORD, FITQ_REDIS_CA, FITQ_REDIS_CERT, FITQ_REDIS_KEY (a run printing its environment would store them in its log in Redis). With it, FITQ_REDIS_URL is the URL the worker uses (--redis-url included, a redis+sentinel:// or redis+cluster:// one as it is), the sentinels\' login variables are kept, and the TLS variables are its files. FITQ_SECRET and FITQ_SECRET_FILE are never passed on.',
    }),
    'reap-escaped': Flags.boolean({
      summary: 'Also kill, when a run ends, the processes it moved out of its process group (setsid daemons); Linux with Perl.',
      description:
        "A run ends when its main process exits, and its process group is killed then. Processes it moved into a session of their own escape that; with this flag each run starts under a small keeper (a child subreaper) that kills them too. It costs about as much CPU per run as the run's spawn, so it is off by default.",
    }),
    enforce: Flags.string({
      summary: 'Hold each run to its own demands in a cgroup: mem (a memory limit), cpu (a CPU quota), or mem,cpu.',
      description:
        "Each run gets a cgroup of its own, below the worker's (cgroup v2 where its controllers are delegated, else the v1 hierarchies, as root), with its mem demand as its memory limit and its cpu demand as its CPU quota. A run killed by its memory limit ends failed, \"out of memory: peak 8.0G, limit 8G\". What a run uses is then counted by the kernel, exactly. The worker does not start where it cannot make cgroups, and says why. Without it, what runs use is read from /proc every second.",
      multiple: true,
    }),
    'metrics-port': Flags.string({
      summary: "Serve this worker's Prometheus metrics (claim duration by outcome, wake-up latency) at http://127.0.0.1:PORT/metrics; 0 picks a free port (logged).",
      description: 'The namespace-wide metrics (runs, capacity, pools) are served by `fitq dashboard` at /metrics. See docs/metrics.md.',
    }),
    'metrics-host': Flags.string({ summary: 'With --metrics-port: the address to bind. Default 127.0.0.1 (this machine only).' }),
    'notify-allow': Flags.string({
      multiple: true,
      summary: 'Send notifications only to URLs under this one: the same scheme, host and port, and its path or below (repeatable).',
      description:
        'Default: any http(s) URL, but none on a worker that requires signed runs: notification URLs are not signed, so whoever can write to Redis chooses them. See docs/lifecycle.md, "Notifications".',
    }),
    detach: Flags.boolean({
      summary: 'Run in the background: return once the worker has registered; its log and pidfile go to the state directory.',
      description: 'State directory: FITQ_STATE_DIR, else $XDG_STATE_HOME/fitq, else ~/.local/state/fitq; one folder per queue. Stop it with `fitq stop`.',
    }),
    pidfile: Flags.string({ summary: 'With --detach: pidfile path. Default: <state dir>/<queue>/<name>.pid.' }),
    'log-file': Flags.string({ summary: 'With --detach: log file path. Default: <state dir>/<queue>/<name>.log.' }),
    ...replicaWaitFlags,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Worker);
    // Read before anything else, so a bad secret file fails at once, --detach or not.
    const secret = cliSecret(flags['secret-file']);
    const timeLimits = workerTimeLimits(flags);
    const metricsPort = flags['metrics-port'] === undefined ? undefined : parsePort('--metrics-port', flags['metrics-port']);
    const waitReplicas = replicaWaitOf(flags);
    if (!flags.detach && (flags.pidfile !== undefined || flags['log-file'] !== undefined)) {
      throw new UsageError(`${flags.pidfile === undefined ? '--log-file' : '--pidfile'} goes with --detach`);
    }
    if (flags.detach) {
      await this.detach(flags);
      return;
    }
    const { resources, sources } = resolveWorkerResources(flags.resources ?? []);
    // Loaded here, not at the top: oclif loads every command to find one, and
    // the worker (BullMQ) is slow to load for commands that do not need it.
    const { startWorker } = await import('../worker/worker.js');
    const { startWithInterrupts } = await import('../worker/interrupts.js');
    const worker = await startWithInterrupts(() => startWorker({
      ...this.connectionOptions(flags),
      queue: flags.queue,
      resources,
      resourceSources: sources,
      name: flags.name,
      concurrency: flags.concurrency,
      runOnce: flags['run-once'],
      policy: flags.policy as 'backfill' | 'fifo',
      gpuPlacement: flags['gpu-placement'] as 'pack' | 'spread',
      gpus: flags.gpus,
      logFormat: flags['log-format'] as 'pretty' | 'json',
      leaseMs: secondsFlag('--lease', flags.lease) * 1000,
      killGraceMs: secondsFlag('--kill-grace', flags['kill-grace']) * 1000,
      gpuProbeIntervalMs: intervalFlag('--gpu-probe-interval', flags['gpu-probe-interval']),
      gpuIgnoreProcesses: flags['gpu-ignore-process'] ?? [],
      gpuForeign: flags['gpu-foreign'] as 'busy' | 'ignore',
      ...timeLimits,
      secret,
      requireSigned: flags['require-signed'],
      passRedisEnv: flags['pass-redis-env'],
      reapEscaped: flags['reap-escaped'],
      ...(flags.enforce === undefined ? {} : { enforce: flags.enforce }),
      redisTlsFiles: { ca: flags['redis-ca'], cert: flags['redis-cert'], key: flags['redis-key'] },
      ...(metricsPort === undefined ? {} : { metricsPort }),
      ...(flags['metrics-host'] === undefined ? {} : { metricsHost: flags['metrics-host'] }),
      ...(flags['notify-allow'] === undefined ? {} : { notifyAllow: flags['notify-allow'] }),
      waitReplicas,
    }));
    adoptOwnDetachedFiles(worker.name, queueName(flags.queue));
    removePidfileOnExit(worker.name, queueName(flags.queue));
    // The first Ctrl-C or SIGTERM lets the runs finish, the next terminates them.
    await worker.done;
    if (worker.failure) {
      process.stderr.write(`Error: ${worker.failure}\n`);
      this.exit(1);
    }
  }

  /** Starts this same command in the background and returns once it has registered (or failed). */
  private async detach(flags: { name?: string; pidfile?: string; 'log-file'?: string; queue?: string; 'run-once'?: boolean }): Promise<void> {
    const queue = queueName(flags.queue);
    const args = backgroundArgs(this.argv);
    const started = spawnDetachedWorker({
      bin: process.argv[1]!,
      args,
      queue,
      name: flags.name,
      pidfile: flags.pidfile,
      logFile: flags['log-file'],
    });
    const exitedEarly = new AbortController();
    void started.exited.then(() => exitedEarly.abort());
    // The background worker itself refuses a Redis that may evict keys: no warning here besides its error.
    const registered = await this.withClient(
      flags,
      (client) =>
        client.waitForWorkers(
          (workers) => workers.some((worker) => worker.name === started.name && worker.pid === started.pid),
          REGISTER_TIMEOUT_MS,
          exitedEarly.signal,
        ),
      { evictionCheck: undefined },
    );
    if (!registered) {
      const exitCode = exitedEarly.signal.aborted ? await started.exited : undefined;
      if (exitCode === undefined) {
        throw new TimeoutError(`the background worker has not registered within ${REGISTER_TIMEOUT_MS / 1000} s (pid ${started.pid}, log ${started.startingLog})`);
      }
      if (exitCode === 0) {
        // It registered, did what it had to (--run-once) and left before this process saw it.
        this.log(`Worker ${started.name} ran in the background and has finished: log ${started.logFile}`);
        return;
      }
      // It failed the way a foreground worker would have: say why, with its exit code.
      const log = keepFailedLog(started);
      const why = failureOf(log) || `exited with code ${exitCode}`;
      process.stderr.write(`${why.startsWith('Error: ') ? why : `Error: ${why}`} (background worker, log ${log})\n`);
      this.exit(exitCode);
    }
    adoptDetachedFiles(started);
    this.log(`Worker ${started.name} started in the background: pid ${started.pid}, log ${started.logFile}, pidfile ${started.pidfile}`);
  }
}

/**
 * The background worker's own arguments: these, less --detach and the file
 * flags that only go with it (it learns its files from the environment).
 */
function backgroundArgs(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (arg === '--detach' || arg.startsWith('--pidfile=') || arg.startsWith('--log-file=')) continue;
    if (arg === '--pidfile' || arg === '--log-file') {
      i++; // and its value
      continue;
    }
    args.push(arg);
  }
  return args;
}

/** How long `--detach` waits for the background worker to register. */
const REGISTER_TIMEOUT_MS = 120_000;

function queueName(flag: string | undefined): string {
  return resolveNamespace({ queue: flag }).queue;
}

function secondsFlag(flag: string, value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(`expected ${flag} to be a number of seconds, got '${value}'`);
  }
  return seconds;
}

/** An interval flag in ms: a duration (`5s`, `1m`) or a number of seconds. */
function intervalFlag(flag: string, value: string): number {
  return /^\s*\d+(\.\d+)?\s*$/.test(value) ? Math.round(secondsFlag(flag, value) * 1000) : parseDuration(flag, value);
}
