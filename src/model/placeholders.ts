/**
 * Placeholders in what a run is staged with (an array's command, --run-id
 * and labels; output file names): `{name}` is filled in, `{{name}}` stays
 * `{name}`, and `${name}` is the shell's, never a placeholder. Other braces
 * are left as they are.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

/** `{{name}}` (kept as `{name}`) or `{name}` (a placeholder), never the shell's `${name}`. */
const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The placeholder names a text uses. */
export function placeholdersOf(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].flatMap((match) => (match[2] === undefined ? [] : [match[2]]));
}

/** A text with its placeholders filled in from `values` (every name must be there). */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, kept: string | undefined, name: string | undefined) =>
    kept !== undefined ? `{${kept}}` : (values[name!] ?? whole),
  );
}

/**
 * Refuses a placeholder of `text` that is not among `known`, quoting it and
 * where it was (`--run-id`, `the command`, `label 'k'`).
 */
export function checkPlaceholders(where: string, text: string, known: ReadonlySet<string>): void {
  const unknown = placeholdersOf(text).find((name) => !known.has(name));
  if (unknown !== undefined) {
    throw new UsageError(`unknown placeholder ${quote(`{${unknown}}`)} in ${where} ${quote(text)}: use ${[...known].map((name) => `{${name}}`).join(', ')}`);
  }
}
