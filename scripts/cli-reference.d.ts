/** Where the command reference is written, relative to the package root (scripts/cli-reference.js). */
export const REFERENCE_PATH: string;
/** The command reference as markdown, from the built CLI in `packageRoot` (default: this package). */
export function cliReference(packageRoot?: string): Promise<string>;
/** GitHub's anchor of a heading: lowercase, spaces to '-', punctuation dropped. */
export function anchor(heading: string): string;
