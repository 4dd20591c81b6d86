import { Flags } from '@oclif/core';
import { replicaWaitFlags, replicaWaitOf } from '../cli/replica-wait-flags.js';
import { FitqCommand, type NonUtf8Place } from '../cli/base-command.js';
import { parseKeyValues } from '../present/key-values.js';
import { shellSyntaxWarning } from '../cli/shell-syntax.js';
import { parseStageWait, stageWaitFlags, waitForStaged } from '../cli/stage-wait.js';
import { parseStageNotify, stageNotifyFlags } from '../cli/stage-notify.js';
import { parseTimeFlags, timeFlags } from '../cli/stage-time.js';
import { parsePreemptFlags, preemptFlags } from '../cli/stage-preempt.js';
import { rememberStaged } from '../cli/last-staged.js';
import { lifecycleFlags, parseLifecycleFlags } from '../cli/stage-lifecycle.js';
import { checkWordsBeforeSeparator, readCommandFile, splitAtSeparator, stageNonUtf8Hint, tooManyFlagWordsMessage } from '../cli/stage-input.js';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { commandJsonWithinLimit, MAX_PRIORITY, parseIntegerOption, STAGE_USAGE } from '../model/run-checks.js';
import { MAX_REPEAT, MAX_RETRIES } from '../model/stage.js';
import { parseDemands, UNITS_HELP } from '../resources/spec.js';
import { cliSecret } from '../security/secret.js';
import { outputFlags, parseOutputFlags } from '../cli/stage-output.js';
import { parseSweepFlags, sweepFlags } from '../cli/stage-sweep.js';

export default class Stage extends FitqCommand {
  static override summary = 'Stage a run: a command with resource demands, started by the first worker it fits.';
  static override description =
    'The run waits, staged, until a worker whose remaining capacity fits every demand claims it (the claim and the reservation are one atomic step, ' +
    'so nothing is oversubscribed and no run starts twice); `fitq runs` says why each staged run waits. Runs that ask for nothing start on any worker. ' +
    'Prints the id of each staged run, one per line (@ names them in later commands). A run can wait for others (--after), for a time (--begin), ' +
    'be held (--hold), be one of an array or sweep (--array, --param), and end by a time limit (--time-limit).';
  static override usage = ['stage [FLAGS] -- COMMAND [ARGS...]', 'stage [FLAGS] --from-file FILE'];
  static override strict = false;
  static override examples = [
    '<%= config.bin %> stage -r foo=5 -- python train.py --lr 0.1',
    '<%= config.bin %> stage -r "foo=1 bar=2" -r baz=1 --repeat 10 -- ./sweep.sh',
    '<%= config.bin %> stage -r gpu=1,mem=8G --priority 5 --label team=vision -- python eval.py',
    '<%= config.bin %> stage -r gpu=1 --gpus 3 -- python train.py',
    '<%= config.bin %> stage --shell -- "make data && python train.py"',
    '<%= config.bin %> stage -r gpu=1 --from-file sweep.txt',
    '<%= config.bin %> stage -r gpu=1 --wait --follow -- python train.py',
    '<%= config.bin %> stage -r gpu=1 --time-limit 2h30m --time-signal SIGUSR1@120s -- python train.py',
    '<%= config.bin %> stage --after @ --retry-on-failure 3 --backoff 30s,exp -- python eval.py',
    '<%= config.bin %> stage --hold --begin 22:00 -- ./nightly.sh',
    '<%= config.bin %> stage -r gpu=1 --array 0-19%4 --output "logs/{index}.out" -- python train.py --seed {index}',
    '<%= config.bin %> stage -r gpu=1 --param lr=0.1,0.01 --param bs=32,64 --run-id "lr{lr}-bs{bs}" -- python train.py --lr {lr} --bs {bs}',
  ];
  static override flags = {
    resources: Flags.string({
      char: 'r',
      multiple: true,
      summary: 'Resource demands, NAME=VALUE pairs separated by spaces or commas, every word up to the next flag or -- (repeatable, merged).',
      description:
        `As with fitq worker -r, -r gpu=1 mem=8G is two demands. Units, in any case: ${UNITS_HELP} (mem=8G is 8×10⁹; Slurm's --mem=8G is mem=8Gi). ` +
        'Demands are booked, not enforced: a run starts on a worker whose declared capacity has that much left, and nothing stops it from using more.',
    }),
    'run-id': Flags.string({ summary: 'Id for the run (must be new). Default: a random id.' }),
    priority: Flags.string({ summary: `Higher runs first: an integer within ±${MAX_PRIORITY}.`, default: '0' }),
    label: Flags.string({ multiple: true, summary: 'KEY=VALUE labels, every word up to the next flag or -- (repeatable).' }),
    env: Flags.string({
      multiple: true,
      summary: "KEY=VALUE added to the worker's environment for this run, every word up to the next flag or -- (repeatable).",
    }),
    cwd: Flags.string({ summary: 'Working directory of the run. Default: the current directory.' }),
    shell: Flags.boolean({ summary: 'Run COMMAND with sh -c; without it the argv runs with no shell.' }),
    gpus: Flags.string({
      summary: 'Pin the run to these GPU devices, like 0,1: a worker with devices gives it exactly these; on one without, they only set CUDA_VISIBLE_DEVICES.',
    }),
    retries: Flags.string({
      summary: `Re-stage the run, at its place in the order, up to this many times (at most ${MAX_RETRIES}) if its worker dies under it.`,
      default: '0',
    }),
    'from-file': Flags.string({
      summary: 'Stage one run per line of this file (- for stdin), each run with sh -c, all with the same flags, in one batch.',
      description: 'Blank lines and lines starting with # are skipped. All the runs are staged, or none.',
    }),
    repeat: Flags.string({ summary: `Stage this many identical runs (at most ${MAX_REPEAT}).`, default: '1' }),
    ...timeFlags,
    ...preemptFlags,
    json: Flags.boolean({ summary: 'Print the staged runs as a JSON array.' }),
    'secret-file': Flags.string({
      summary: 'Sign the runs with the shared secret in this file, for workers that require signed runs.',
      description: 'Default: the file named by FITQ_SECRET_FILE, else the secret in FITQ_SECRET; none: the runs are not signed.',
    }),
    ...stageWaitFlags,
    ...stageNotifyFlags,
    ...lifecycleFlags,
    ...sweepFlags,
    ...outputFlags,
    ...replicaWaitFlags,
  };

  /** The words as typed: parsing replaces this.argv with the words it was given. */
  private readonly typed = [...this.argv];

  async run(): Promise<void> {
    // oclif only sees the words before '--': the command is never parsed as flags.
    const { flagWords, command } = splitAtSeparator(this.argv);
    const { flags, raw } = await this.parse(Stage, flagWords);
    const fromFile = flags['from-file'];
    checkWordsBeforeSeparator(raw, command === undefined && fromFile === undefined);
    if (fromFile !== undefined && command !== undefined) {
      throw new UsageError(`give the command after '--' or --from-file ${quote(fromFile)}, not both`);
    }
    if (fromFile !== undefined && flags['run-id'] !== undefined) {
      throw new UsageError(`--run-id ${quote(flags['run-id'])} names one run: it does not go with --from-file`);
    }
    // A command too large is refused before anything else is done with it.
    if (command !== undefined && command.length > 0) commandJsonWithinLimit(command, flags.shell);
    // Parsed once, here: refused before connecting; the runs keep the specs as typed.
    const demands = parseDemands(flags.resources ?? []);
    const common = {
      resources: demands,
      runId: flags['run-id'],
      priority: parseIntegerOption('--priority', flags.priority, -MAX_PRIORITY, MAX_PRIORITY),
      labels: parseKeyValues('--label', flags.label),
      env: parseKeyValues('--env', flags.env),
      cwd: flags.cwd,
      repeat: parseIntegerOption('--repeat', flags.repeat, 1, MAX_REPEAT),
      gpus: flags.gpus,
      retries: parseIntegerOption('--retries', flags.retries, 0, MAX_RETRIES),
      ...parseStageNotify(flags),
      ...parseTimeFlags(flags),
      ...parsePreemptFlags(flags),
      array: parseSweepFlags(flags),
      output: parseOutputFlags(flags),
    };
    if (common.array !== undefined && fromFile !== undefined) throw new UsageError('--from-file does not go with --array, --param or --param-file');
    // Each line of a file is shell text, as in other spoolers' job files.
    const requests =
      fromFile === undefined
        ? [{ ...common, command: command ?? [], shell: flags.shell }]
        : (await readCommandFile(fromFile)).map((line) => ({ ...common, command: [line], shell: true }));
    const waiting = parseStageWait(flags, requests.length * common.repeat);
    const warnings = fromFile === undefined && !flags.shell ? [shellSyntaxWarning(command ?? [])] : [];
    const secret = cliSecret(flags['secret-file']);
    const waitReplicas = replicaWaitOf(flags);
    const result = await this.withClient(
      flags,
      async (client) => {
        // `@` names the runs last staged from this shell, in this namespace: an array as a whole.
        const lifecycle = parseLifecycleFlags(flags, client.keys.base);
        const staged = await client.stage(requests.map((request) => ({ ...request, ...lifecycle })));
        rememberStaged(client.keys.base, staged.runs.map((run) => run.id), staged.runs[0]?.array);
        return staged;
      },
      { secret, waitReplicas },
    );
    for (const warning of [...warnings, ...result.warnings]) if (warning) process.stderr.write(`Warning: ${warning}\n`);
    const array = result.runs[0]?.array;
    if (array !== undefined) process.stderr.write(`Staged array ${array} (${result.runs.length} run${result.runs.length === 1 ? '' : 's'})\n`);
    // Following, stdout is the run's: its id goes to stderr. Waiting with --json: the runs as they ended.
    if (waiting?.follow) process.stderr.write(`Staged run ${result.runs[0]!.id}\n`);
    else if (flags.json && !waiting) this.log(JSON.stringify(result.runs, null, 2));
    else if (!flags.json) for (const run of result.runs) this.log(run.id);
    if (!waiting) return;
    const ids = result.runs.map((run) => run.id);
    const { code, runs } = await this.withClient(flags, (client) => waitForStaged(client, ids, waiting));
    if (flags.json) this.log(JSON.stringify(runs, null, 2));
    if (code !== 0) this.exit(code);
  }

  /** Only the words before '--' go to oclif's parser, so only they count against its limit. */
  protected override wordsToParse(): readonly string[] {
    return splitAtSeparator(this.argv).flagWords;
  }

  protected override tooManyWordsMessage(count: number): string {
    return tooManyFlagWordsMessage(count, this.argv.includes('--'));
  }

  protected override nonUtf8Hint(place: NonUtf8Place): string {
    return stageNonUtf8Hint(place);
  }

  /** Without '--', an unknown flag is most likely the command's own. */
  protected override parseErrorHint(error: Error): string | undefined {
    if (error.constructor.name !== 'NonExistentFlagsError' || this.typed.includes('--')) return undefined;
    return `put '--' before the command: ${STAGE_USAGE}`;
  }
}
