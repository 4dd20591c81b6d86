/**
 * What `fitq stage` reads besides its flags: the command after `--`, or the
 * commands of --from-file; and the rule that every word before `--` belongs
 * to a flag. -r, --label and --env take every word up to the next flag or
 * `--` (as `fitq worker -r` does), so `-r gpu=1 mem=8G` is two demands.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { oneLine, quote, quoteBytes } from '../text/quote.js';
import { STAGE_USAGE } from '../model/run-checks.js';
import { decodeUtf8, utf8Pieces } from '../text/utf8.js';
import { MAX_PARSED_WORDS, type NonUtf8Place } from './base-command.js';

/** The flags that take every word up to the next flag or `--`. */
const GREEDY_FLAGS = new Set(['resources', 'label', 'env', 'param']);

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
 * What to do instead of typing a word that is not UTF-8: a word of the
 * command can be made by shell text (--shell), which is UTF-8 itself.
 */
export function stageNonUtf8Hint({ afterSeparator, bytes }: NonUtf8Place): string {
  if (!afterSeparator) return "fitq stores flags' values (labels, --env, --cwd) as UTF-8 text; give it in UTF-8 (for a path, a UTF-8 symlink to it)";
  const example = bytes === undefined ? undefined : printfExample(bytes);
  return (
    'fitq stores commands as UTF-8 text and would run something else: give it in UTF-8, ' +
    `or stage shell text (--shell) that makes these bytes${example === undefined ? '' : `, like ${example}`}`
  );
}

/**
 * Shell text that makes these bytes, `"$(printf 'caf\351.txt')"`: octal
 * escapes for what is not UTF-8 and for what printf, the quotes or a terminal
 * would take otherwise. None when the bytes end with a newline, which $(...)
 * would drop.
 */
function printfExample(bytes: Buffer): string | undefined {
  if (bytes.at(-1) === 0x0a) return undefined;
  const octal = (byte: number) => `\\${byte.toString(8).padStart(3, '0')}`;
  let format = '';
  for (const piece of utf8Pieces(bytes)) {
    if (typeof piece === 'number') format += octal(piece);
    else if ("'\\%".includes(piece) || oneLine(piece) !== piece) format += Array.from(Buffer.from(piece), octal).join('');
    else format += piece;
  }
  return `"$(printf '${format}')"`;
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
 * per line; blank lines and lines starting with `#` are skipped. A line that
 * is not UTF-8 is refused, naming it: it would run as another command.
 */
export async function readCommandFile(path: string): Promise<string[]> {
  let bytes: Buffer;
  try {
    bytes = path === '-' ? await readStdin() : readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read --from-file ${quote(path)}: ${describeReadError(error as NodeJS.ErrnoException)}`);
  }
  const text = decodeUtf8(bytes) ?? refuseNonUtf8Line(path, bytes);
  const commands = text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
  if (commands.length === 0) {
    throw new UsageError(`no commands in --from-file ${quote(path)}: give one shell command per line (blank lines and # comments are skipped)`);
  }
  return commands;
}

/**
 * Refuses the first line of a --from-file that is not UTF-8, showing its
 * bytes (a newline byte is never part of a longer UTF-8 sequence).
 */
function refuseNonUtf8Line(path: string, bytes: Buffer): never {
  const lines: Buffer[] = [];
  for (let start = 0; start <= bytes.length; ) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline < 0 ? bytes.length : newline;
    lines.push(bytes.subarray(start, end));
    start = end + 1;
  }
  const index = Math.max(0, lines.findIndex((line) => decodeUtf8(line) === undefined));
  throw new UsageError(
    `line ${index + 1} of --from-file ${quote(path)} is not valid UTF-8: ${quoteBytes(lines[index] ?? bytes)}; ` +
      'fitq stores commands as UTF-8 text: write the bytes as shell escapes, like "$(printf \'\\351\')"',
  );
}

/** All of stdin, as a stream: reading fd 0 at once fails (EAGAIN) when it is non-blocking. */
async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
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
