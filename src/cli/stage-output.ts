/**
 * `fitq stage --output FILE`, `--error FILE` and `--open-mode`: the files
 * the worker also writes a run's output to (model/output-files.ts).
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import type { OutputFiles } from '../model/output-files.js';

export const outputFlags = {
  output: Flags.string({
    summary: "Also write the run's stdout (and stderr, without --error) to this file on the worker, relative to the run's directory.",
    description: 'Placeholders: {id}, and for an array {index}, {array} and {NAME} of each parameter. Truncated when the run starts, unless --open-mode append.',
  }),
  error: Flags.string({ summary: "Also write the run's stderr to this file on the worker (default: the --output file)." }),
  'open-mode': Flags.string({ options: ['truncate', 'append'], summary: 'Truncate the output files when the run starts (default), or append to them.' }),
};

export interface OutputFlags {
  output?: string | undefined;
  error?: string | undefined;
  'open-mode'?: string | undefined;
}

/** The output files of `fitq stage`'s flags, if any. */
export function parseOutputFlags(flags: OutputFlags): OutputFiles | undefined {
  if (flags.output === undefined) {
    if (flags.error !== undefined) throw new UsageError(`--error ${quote(flags.error)} needs --output too (the file for stdout)`);
    if (flags['open-mode'] !== undefined) throw new UsageError(`--open-mode ${flags['open-mode']} needs --output`);
    return undefined;
  }
  return {
    stdout: flags.output,
    ...(flags.error === undefined ? {} : { stderr: flags.error }),
    ...(flags['open-mode'] === 'append' ? { append: true } : {}),
  };
}
