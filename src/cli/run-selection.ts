/**
 * Which runs a command acts on: the one way `fitq cancel`, `fitq runs rm`
 * (and hold, release, restart, update) select runs.
 *
 * - positional run ids, or unique prefixes of them (an unknown or ambiguous
 *   one is refused, exit 2, and nothing is touched), and `@`/`@~N`: every
 *   run the last (the Nth before) `fitq stage` staged from this shell
 *   (last-staged.ts), an array's as they are now;
 * - `--status S` (repeatable or comma-separated: any of them),
 *   `--label K=V` (repeatable: all must match), `--array ID` (an array id
 *   or a unique prefix of one; unknown: exit 2), `--user NAME` or `--mine`
 *   (who staged them): every one given must hold;
 * - the runs named and the runs the flags select, each once, named first.
 * - `--dry-run`: list what would be touched (`--json`: as a JSON array of
 *   run records) and touch nothing.
 * A selection that matches nothing does nothing: the command says so on
 * stderr (`No runs match --status failed --array 3f2a: nothing to cancel.`;
 * with `--json`, `[]` on stdout) and exits EXIT.nothingMatched, as every
 * command that selects runs does (`fitq wait` included).
 *
 * Usage in a command (see commands/cancel.ts):
 *
 *   static override strict = false;
 *   static override args = selectionArgs;
 *   static override flags = { ...selectionFlags, json: Flags.boolean(...), ... };
 *
 *   const { argv, flags } = await this.parse(Hold);
 *   // verb: as in "nothing to hold"; statuses: what --label/--array alone select (default: any status)
 *   const selection = parseRunSelection(argv as string[], flags, { verb: 'hold', statuses: ['staged'] });
 *   await this.withClient(flags, async (client) => {
 *     const runs = await selectRuns(client, selection);
 *     if (reportSelection(this, selection, runs, flags)) return; // dry run, or nothing matched: said so
 *     await client.holdRuns(runs.map((run) => run.id));
 *   });
 *
 * A command's tooManyWordsMessage can add `selectInstead(verb)`.
 */
import { Args, Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import type { FitqClient } from '../client.js';
import { RUN_STATUSES, type RunFilter, type RunRecord, type RunStatus } from '../model/run-record.js';
import { renderTable } from './format.js';
import { inBatches } from './base-command.js';
import { parseKeyValues } from '../present/key-values.js';
import { isShorthand, shorthandRuns } from './last-staged.js';
import { runTable } from '../present/run-table.js';
import { userDescribed, userFilter, userFlags } from './user-selection.js';

export const selectionArgs = { ids: Args.string({ description: 'Run ids, or unique prefixes of them; @ for the runs last staged from this shell, @~N for the Nth staging before.' }) };

export const selectionFlags = {
  status: Flags.string({
    multiple: true,
    multipleNonGreedy: true,
    delimiter: ',',
    options: [...RUN_STATUSES],
    summary: 'Select the runs with this status (repeatable, or comma-separated: failed,lost).',
  }),
  label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Select the runs with this KEY=VALUE label (repeatable: all must match).' }),
  array: Flags.string({ summary: 'Select the runs of this array (its id, or a unique prefix of it).' }),
  ...userFlags('Select'),
  'dry-run': Flags.boolean({ summary: 'List the runs it would act on (with --json: as JSON), and do nothing.' }),
};

export interface SelectionFlagValues {
  status?: string[] | undefined;
  label?: string[] | undefined;
  array?: string | undefined;
  user?: string | undefined;
  mine?: boolean | undefined;
  'dry-run'?: boolean | undefined;
}

export interface RunSelection {
  /** Run ids or prefixes, as given. */
  refs: string[];
  /** What the flags select; undefined when none was given (only the named runs). */
  filter: RunFilter | undefined;
  dryRun: boolean;
  verb: string;
  /** The flags as given, for messages: "--status failed --array 3f2a". */
  described: string;
}

/**
 * Reads a command's selection. Naming no run and giving no selecting flag is
 * refused (exit 2). `statuses`: the statuses --label or --array alone
 * select (cancel: the runs that can still be canceled); default any.
 */
export function parseRunSelection(
  argv: readonly string[],
  flags: SelectionFlagValues,
  options: { verb: string; statuses?: readonly RunStatus[] },
): RunSelection {
  const labels = parseKeyValues('--label', flags.label);
  const user = userFilter(flags);
  const selecting = flags.status !== undefined || flags.label !== undefined || flags.array !== undefined || user.user !== undefined;
  if (argv.length === 0 && !selecting) throw new UsageError(`name the runs to ${options.verb}, or select them with --status, --label, --array, --user or --mine`);
  const statuses = (flags.status ?? options.statuses) as RunStatus[] | undefined;
  const filter: RunFilter | undefined = selecting
    ? { ...(statuses === undefined ? {} : { statuses }), labels, ...(flags.array === undefined ? {} : { array: flags.array }), ...user }
    : undefined;
  const described = [
    ...(statuses === undefined ? [] : [`--status ${statuses.join(',')}`]),
    ...(flags.label ?? []).map((label) => `--label ${label}`),
    ...(flags.array === undefined ? [] : [`--array ${flags.array}`]),
    ...userDescribed(flags),
  ].join(' ');
  return { refs: [...argv], filter, dryRun: flags['dry-run'] === true, verb: options.verb, described };
}

/** The runs a selection names and matches (see FitqClient.selectRunRecords); `@` names what this shell staged. */
export async function selectRuns(client: FitqClient, selection: RunSelection): Promise<RunRecord[]> {
  const refs: string[] = [];
  for (const ref of selection.refs) {
    if (!isShorthand(ref)) {
      refs.push(ref);
      continue;
    }
    const { ids, arrays } = shorthandRuns(ref, client.keys.base);
    refs.push(...ids);
    for (const array of arrays) refs.push(...(await client.selectRunIds([], { array })));
  }
  return client.selectRunRecords(refs, selection.filter);
}

/** The command that reports a selection: it prints, and ends with an exit code (oclif's Command). */
export interface SelectingCommand {
  log(message: string): void;
  exit(code: number): never;
}

/**
 * For a dry run, lists the runs (a table, or JSON with `json`); for a
 * selection that matched nothing, says so (reportNothingMatched). Returns
 * true when the command has nothing more to do.
 */
export function reportSelection(
  command: SelectingCommand,
  selection: RunSelection,
  runs: readonly RunRecord[],
  flags: { json?: boolean | undefined },
): boolean {
  if (runs.length === 0) {
    reportNothingMatched(command, selection, flags);
    return true;
  }
  if (selection.dryRun) {
    reportDryRun(command, selection.verb, runs, flags);
    return true;
  }
  return false;
}

/** What a dry run would act on: `Would cancel 3 runs:` and a table of them, or (`json`) their records. */
export function reportDryRun(command: { log(message: string): void }, verb: string, runs: readonly RunRecord[], flags: { json?: boolean | undefined }): void {
  if (flags.json) return command.log(JSON.stringify(runs, null, 2));
  command.log(`Would ${verb} ${runs.length} run${runs.length === 1 ? '' : 's'}${runs.length === 0 ? '.' : ':'}`);
  if (runs.length === 0) return;
  const { header, rows } = runTable(runs, ['id', 'status', 'array', 'labels', 'command'], false);
  command.log(renderTable(header, rows));
}

/** Says that a selection matched no run (`[]` on stdout with `json`) and ends the command with the exit code that says so. */
export function reportNothingMatched(command: SelectingCommand, selection: RunSelection, flags: { json?: boolean | undefined }): never {
  if (flags.json) command.log('[]');
  process.stderr.write(`No runs match ${selection.described || 'the ids given'}: nothing to ${selection.verb}.\n`);
  return command.exit(EXIT.nothingMatched);
}

/** What to say when a command is given too many words: select instead, or name them in batches. */
export function selectInstead(command: string): string {
  return `select the runs with --status, --label or --array, or name them ${inBatches(command)}`;
}
