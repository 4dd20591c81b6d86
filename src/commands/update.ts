import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { parseKeyValues } from '../present/key-values.js';
import { parseRunSelection, reportNothingMatched, selectInstead, selectionArgs, selectionFlags, selectRuns } from '../cli/run-selection.js';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { quote } from '../text/quote.js';
import { parseTimeLimit } from '../units/duration.js';
import { printWarning } from '../cli/format.js';
import { MAX_PRIORITY, parseIntegerOption } from '../model/run-checks.js';
import { checkChanges, type RunChanges } from '../model/run-edits.js';
import { describeUpdate } from '../present/result-lines.js';
import { parseDemands, specParts } from '../resources/spec.js';
import { cliSecret } from '../security/secret.js';

/** Fields of a run whose change decides again which workers could run it. */
const FIT_FIELDS = ['resources', 'gpus', 'timeLimit'];

/**
 * Refuses a word given to a flag that takes every word up to the next flag
 * (-r, --label) but is no KEY=VALUE pair: most likely a run id typed after
 * the flag.
 */
function checkPairs(flag: string, what: string, values: readonly string[], words: readonly string[], ids: readonly string[]): void {
  const word = words.find((part) => !part.includes('='));
  if (word === undefined) return;
  const first = values.find((value) => value.includes('=')) ?? values[0]!;
  throw new UsageError(
    `${quote(word)} is no ${what}: ${flag} takes every word up to the next flag, so name the runs before it (fitq update ${[...ids, word][0]} ${flag} ${first})`,
  );
}

export default class Update extends FitqCommand {
  static override summary = 'Change staged or held runs: priority, demands, labels, pinned GPUs.';
  static override description =
    'A run is either claimed with its old demands or staged with its new ones, never a mix; among runs of the same priority ' +
    'it keeps its place in the order. Every run is checked first: an unknown id, a bad value, a run that is running or ' +
    'ended, or a signed run without the secret updates nothing. A run claimed between the check and the change is ' +
    'reported (exit 1) and the others are updated. Signed runs are signed anew with the secret (as fitq stage signs). ' +
    'Runs are named by id (or a unique prefix of one), or selected with --status, --where-label, --array and --user or --mine (all must match; ' +
    'without --status: the staged and held runs).';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> update 3f2a --priority 10',
    '<%= config.bin %> update 3f2a 77b0 -r gpu=2 mem=16G',
    '<%= config.bin %> update 3f2a -r mem=0',
    '<%= config.bin %> update 3f2a --label team=vision --unlabel draft',
    '<%= config.bin %> update 3f2a --gpus none --dry-run',
    '<%= config.bin %> update --array 9c1e --status held --priority 5',
  ];
  static override args = selectionArgs;
  static override flags = {
    status: selectionFlags.status,
    array: selectionFlags.array,
    user: selectionFlags.user,
    mine: selectionFlags.mine,
    // (--label sets a label: runs are selected by label with --where-label.)
    'where-label': Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Select the runs with this KEY=VALUE label (repeatable: all must match).' }),
    priority: Flags.string({ summary: `New priority (higher runs first): an integer within ±${MAX_PRIORITY}.` }),
    resources: Flags.string({
      char: 'r',
      multiple: true,
      summary: 'Demands to change, NAME=VALUE pairs separated by spaces or commas, every word up to the next flag (repeatable, merged).',
      description: 'The demands named change, the others stay (as scontrol update); NAME=0 removes one: -r mem=16G cpu=0.',
    }),
    label: Flags.string({ multiple: true, summary: 'Set labels, KEY=VALUE, every word up to the next flag (repeatable).' }),
    unlabel: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Remove the label KEY (repeatable).' }),
    gpus: Flags.string({ summary: 'Pin the runs to these GPU devices, like 0,1; none unpins them.' }),
    'time-limit': Flags.string({ summary: 'New time limit (2h30m, HH:MM:SS, D-HH:MM:SS or seconds); none removes it.' }),
    'dry-run': Flags.boolean({ summary: 'Show what would change (old -> new), change nothing.' }),
    json: Flags.boolean({ summary: 'Print the updated runs (with --dry-run: as they would be) as a JSON array.' }),
    'secret-file': Flags.string({
      summary: 'Sign the updated runs anew with the shared secret in this file (signed runs are refused without it).',
      description: 'Default: the file named by FITQ_SECRET_FILE, else the secret in FITQ_SECRET.',
    }),
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(Update);
    const ids = argv as string[];
    // A run id typed after -r or --label went to them: said first.
    if (flags.resources !== undefined) checkPairs('-r', 'demand (NAME=VALUE)', flags.resources, flags.resources.flatMap(specParts), ids);
    if (flags.label !== undefined) checkPairs('--label', 'label (KEY=VALUE)', flags.label, flags.label, ids);
    if (ids.length === 0 && flags.status === undefined && flags['where-label'] === undefined && flags.array === undefined && flags.user === undefined && !flags.mine) {
      throw new UsageError('name the runs to update, or select them with --status, --where-label, --array, --user or --mine');
    }
    // --where-label or --array alone: the staged and held runs.
    const selection = parseRunSelection(ids, { status: flags.status, label: flags['where-label'], array: flags.array, user: flags.user, mine: flags.mine }, { verb: 'update', statuses: ['staged', 'held'] });
    // (A run id never holds '='.)
    const spec = ids.find((id) => id.includes('='));
    if (spec !== undefined) {
      throw new UsageError(`${quote(spec)} is no run id: give demands with -r and labels with --label (each takes every word up to the next flag)`);
    }
    const changes: RunChanges = {};
    if (flags.priority !== undefined) changes.priority = parseIntegerOption('--priority', flags.priority, -MAX_PRIORITY, MAX_PRIORITY);
    if (flags.resources !== undefined) {
      if (flags.resources.every((value) => value.trim() === '')) {
        throw new UsageError("-r '' names no demand: name the demands to change (-r mem=16G), and remove one with NAME=0 (-r mem=0)");
      }
      // Parsed once, here: refused before connecting.
      changes.resources = parseDemands(flags.resources, { keepZero: true });
    }
    if (flags.label !== undefined) changes.labels = parseKeyValues('--label', flags.label);
    if (flags.unlabel !== undefined) changes.unlabel = flags.unlabel;
    if (flags.gpus !== undefined) changes.gpus = flags.gpus === 'none' ? null : flags.gpus;
    const timeLimit = flags['time-limit'];
    if (timeLimit !== undefined) changes.timeLimit = timeLimit === 'none' ? null : parseTimeLimit('--time-limit', timeLimit, printWarning);
    checkChanges(changes); // refused before connecting
    const secret = cliSecret(flags['secret-file']);
    const warnings: string[] = [];
    const results = await this.withClient(
      flags,
      async (client) => {
        const runs = await selectRuns(client, selection);
        if (runs.length === 0) {
          reportNothingMatched(this, selection, flags);
          return [];
        }
        const updated = await client.updateRuns(runs.map((run) => run.id), changes, { dryRun: flags['dry-run'] });
        // As fitq stage warns: runs whose demands, pins or limit changed, that no live worker could run.
        const refit = updated.filter((result) => result.outcome === 'updated' && result.changes.some((change) => FIT_FIELDS.includes(change.field)));
        if (!flags['dry-run']) warnings.push(...(await client.unrunnableWarnings(refit.map((result) => result.id), 'updated')));
        return updated;
      },
      { secret },
    );
    for (const warning of warnings) process.stderr.write(`Warning: ${warning}\n`);
    if (flags.json) this.log(JSON.stringify(results.flatMap((result) => (result.run ? [result.run] : [])), null, 2));
    else for (const result of results) if (result.outcome !== 'refused') this.log(describeUpdate(result, flags['dry-run']));
    const refused = results.filter((result) => result.outcome === 'refused');
    for (const result of refused) process.stderr.write(`Error: ${result.reason}\n`);
    // Another user's signed run: a mistake; one that changed meanwhile: not done.
    if (refused.some((result) => result.owner !== undefined)) this.exit(EXIT.usage);
    if (refused.length > 0) this.exit(EXIT.failed);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: ${selectInstead('update').replace('--label', '--where-label')}`;
  }
}
