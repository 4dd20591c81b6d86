/**
 * What `fitq stage` reads besides its flags: the command after `--`, or the
 * commands of --from-file; and the rule that every word before `--` belongs
 * to a flag. -r, --label and --env take every word up to the next flag or
 * `--` (as `fitq worker -r` does), so `-r gpu=1 mem=8G` is two demands.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { quote } from '../queue/names.js';
import { STAGE_USAGE } from '../queue/stage.js';
import { MAX_PARSED_WORDS } from './base-command.js';

/** The flags that take every word up to the next flag or `--`. */
const GREEDY_FLAGS = new Set(['resources', 'label', 'env']);

/** A word as oclif's parser consumed it: a flag's value, or an argument no flag took. */
export interface ParsedWord {
  type: 'arg' | 'flag';
  input: string;
  flag?: string;
}

/** The words before the first `--` (for the flag parser) and the command after it, if there is a `--`. */
export function splitAtSeparator(argv: readonly string[]): { flagWords: string[]; command: string[] | undefined } {
  const separator = argv.indexOf('--');
  if (separator < 0) return { flagWords: [...argv], command: undefined };
  return { flagWords: argv.slice(0, separator), command: argv.slice(separator + 1) };
}

/**
 * The refusal of more than MAX_PARSED_WORDS words before `--` (or, with no
 * `--`, in all), naming the limit and the count given.
 */
export function tooManyFlagWordsMessage(count: number, hasSeparator: boolean): string {
  const given = `${count} given, at most ${MAX_PARSED_WORDS}`;
  return hasSeparator
    ? `too many arguments before '--': ${given} (flags and their values): ${STAGE_USAGE}`
    : `too many arguments with no '--': ${given} before it (flags and their values); put the command after '--': ${STAGE_USAGE}`;
}

/**
 * Refuses any word before `--` that no flag took. When a command is expected
 * and there is no `--`, the first such word, or a -r/--label/--env word that
 * is not NAME=VALUE, is taken for a command missing its `--`.
 */
export function checkWordsBeforeSeparator(words: readonly ParsedWord[], commandWithoutSeparator: boolean): void {
  if (commandWithoutSeparator) {
    const misplaced = words.find(
      (word) => word.type === 'arg' || (GREEDY_FLAGS.has(word.flag ?? '') && word.input.trim() !== '' && !word.input.includes('=')),
    );
    if (misplaced) throw new UsageError(`missing '--' before the command ${quote(misplaced.input)}: ${STAGE_USAGE}`);
    throw new UsageError(`missing command: ${STAGE_USAGE}`);
  }
  const stray = words.find((word) => word.type === 'arg');
  if (stray) throw new UsageError(`unexpected argument ${quote(stray.input)}: no flag takes it (${STAGE_USAGE})`);
}

/**
 * The commands of a --from-file (a path, or `-` for stdin): one shell command
 * per line; blank lines and lines starting with `#` are skipped.
 */
export async function readCommandFile(path: string): Promise<string[]> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --from-file ${quote(path)}: ${describeReadError(error as NodeJS.ErrnoException)}`);
  }
  const commands = text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
  if (commands.length === 0) {
    throw new UsageError(`no commands in --from-file ${quote(path)}: give one shell command per line (blank lines and # comments are skipped)`);
  }
  return commands;
}

/** All of stdin, as a stream: reading fd 0 at once fails (EAGAIN) when it is non-blocking. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function describeReadError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
      return 'permission denied';
    default:
      return error.message;
  }
}
