import { Flags } from '@oclif/core';
import { FitqCommand, parseKeyValues } from '../cli/base-command.js';
import { UsageError } from '../errors.js';
import { MAX_PRIORITY, MAX_REPEAT, MAX_RETRIES, parseIntegerOption } from '../queue/stage.js';
import { parseResourceSpecs } from '../resources/spec.js';
import { cliSecret } from '../security/secret.js';

export default class Stage extends FitqCommand {
  static override summary = 'Stage a run: a command with resource demands, started by the first worker it fits.';
  static override usage = 'stage [FLAGS] -- COMMAND [ARGS...]';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> stage -r foo=5 -- python train.py --lr 0.1',
    '<%= config.bin %> stage -r "foo=1 bar=2" -r baz=1 --repeat 10 -- ./sweep.sh',
    '<%= config.bin %> stage -r gpu=1,mem=8G --priority 5 --label team=vision -- python eval.py',
    '<%= config.bin %> stage -r gpu=1 --gpus 3 -- python train.py',
    '<%= config.bin %> stage --shell -- "make data && python train.py"',
  ];
  static override flags = {
    resources: Flags.string({
      char: 'r',
      multiple: true,
      multipleNonGreedy: true,
      summary: 'Resource demands, NAME=VALUE pairs separated by spaces or commas (repeatable, merged).',
    }),
    'run-id': Flags.string({ summary: 'Id for the run (must be new). Default: a random id.' }),
    priority: Flags.string({ summary: `Higher runs first: an integer within ±${MAX_PRIORITY}.`, default: '0' }),
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'KEY=VALUE label (repeatable).' }),
    env: Flags.string({ multiple: true, multipleNonGreedy: true, summary: "KEY=VALUE added to the worker's environment for this run (repeatable)." }),
    cwd: Flags.string({ summary: 'Working directory of the run. Default: the current directory.' }),
    shell: Flags.boolean({ summary: 'Run COMMAND with sh -c; without it the argv runs with no shell.' }),
    gpus: Flags.string({
      summary: 'Pin the run to these GPU devices, like 0,1: a worker with devices gives it exactly these; on one without, they only set CUDA_VISIBLE_DEVICES.',
    }),
    retries: Flags.string({
      summary: `Re-stage the run, at its place in the order, up to this many times (at most ${MAX_RETRIES}) if its worker dies under it.`,
      default: '0',
    }),
    repeat: Flags.string({ summary: `Stage this many identical runs (at most ${MAX_REPEAT}).`, default: '1' }),
    json: Flags.boolean({ summary: 'Print the staged runs as a JSON array.' }),
    'secret-file': Flags.string({
      summary: 'Sign the runs with the shared secret in this file, for workers that require signed runs.',
      description: 'Default: the file named by FITQ_SECRET_FILE, else the secret in FITQ_SECRET; none: the runs are not signed.',
    }),
  };

  async run(): Promise<void> {
    const { flags, argv } = await this.parse(Stage);
    const separator = this.argv.indexOf('--');
    if (separator < 0) {
      throw new UsageError(
        argv.length > 0
          ? `missing '--' before the command '${String(argv[0])}': fitq stage [FLAGS] -- COMMAND [ARGS...]`
          : 'missing command: fitq stage [FLAGS] -- COMMAND [ARGS...]',
      );
    }
    const command = this.argv.slice(separator + 1);
    const specs = flags.resources ?? [];
    parseResourceSpecs(specs); // refused before connecting; the run keeps the specs as typed
    const request = {
      command,
      resources: specs,
      runId: flags['run-id'],
      priority: parseIntegerOption('--priority', flags.priority, -MAX_PRIORITY, MAX_PRIORITY),
      labels: parseKeyValues('--label', flags.label),
      env: parseKeyValues('--env', flags.env),
      cwd: flags.cwd,
      shell: flags.shell,
      repeat: parseIntegerOption('--repeat', flags.repeat, 1, MAX_REPEAT),
      gpus: flags.gpus,
      retries: parseIntegerOption('--retries', flags.retries, 0, MAX_RETRIES),
    };
    const secret = cliSecret(flags['secret-file']);
    const result = await this.withClient(flags, (client) => client.stage(request), { secret });
    for (const warning of result.warnings) process.stderr.write(`Warning: ${warning}\n`);
    if (flags.json) this.log(JSON.stringify(result.runs, null, 2));
    else for (const run of result.runs) this.log(run.id);
  }
}
