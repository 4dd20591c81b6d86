/**
 * A command staged without --shell runs as an argv, with no shell: one that
 * only a shell understands (`echo hi | tr a-z A-Z` as one word, `cd`, a
 * standalone `&&`) would fail later as "command not found". We say so when
 * staging. Arguments are judged loosely (`grep 'a|b'` is ordinary argv); the
 * first word, and words that are nothing but shell syntax, decide.
 */
import { existsSync } from 'node:fs';
import { quote } from '../text/quote.js';

/** Words that mean something only to a shell when they stand alone. */
const OPERATORS = new Set(['|', '||', '|&', '&', '&&', ';', ';;', '>', '>>', '<', '<<', '<<<', '&>', '&>>', '2>', '2>>', '2>&1', '>&2', '1>&2']);

/** find's -exec and -ok end with a standalone ';', which is argv, not shell. */
const TAKES_SEMICOLON = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** Shell builtins and keywords that are no program of their own. */
const SHELL_WORDS = new Set(['cd', 'export', 'source', '.', 'alias', 'unset', 'set', 'if', 'for', 'while', 'until', 'case', 'function']);

/** Characters that make a first word shell text rather than a program name. */
const SHELL_CHARACTERS = /[\s|&;<>`]|\$\(/;

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Why this argv looks like shell text (the part that gives it away), or undefined. */
export function shellSyntaxIn(command: readonly string[]): string | undefined {
  const [first = '', ...rest] = command;
  if (ASSIGNMENT.test(first)) return `it starts with the assignment ${quote(first)}`;
  if (SHELL_WORDS.has(first)) return `${quote(first)} is a shell builtin`;
  // A path to a program that exists is a program, whatever its name holds.
  const syntax = SHELL_CHARACTERS.exec(first);
  if (syntax && !(first.includes('/') && existsSync(first))) {
    return /\s/.test(syntax[0]) ? 'its first word holds spaces' : `it holds ${quote(syntax[0])}`;
  }
  const semicolonIsArgv = rest.some((word) => TAKES_SEMICOLON.has(word));
  const operator = rest.find(
    (word) => (OPERATORS.has(word) && !(word === ';' && semicolonIsArgv)) || word.startsWith('$(') || word.startsWith('`'),
  );
  return operator === undefined ? undefined : `it holds ${quote(operator)}`;
}

/** The warning to print when staging such a command without --shell, or undefined. */
export function shellSyntaxWarning(command: readonly string[]): string | undefined {
  const why = shellSyntaxIn(command);
  if (why === undefined) return undefined;
  return `${quote(command.join(' '))} looks like a shell command (${why}) but runs with no shell; stage it with --shell`;
}
