/**
 * Output files (`fitq stage --output FILE --error FILE`, Slurm's -o/-e):
 * besides storing a run's output for `fitq logs`, the worker writes its
 * stdout and stderr to these files, as the run printed them (bytes, not
 * lines). Paths are relative to the run's directory and may hold
 * placeholders: `{id}` (the run id) and, for an array's runs, `{index}`,
 * `{array}` and `{NAME}` for each parameter. Without `stderr`, stderr goes
 * to the stdout file too. The files are truncated when the run starts
 * (`append`: appended to). A file the worker cannot open makes the run end
 * failed with the reason, before its command starts.
 */
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { checkPlaceholders, fillPlaceholders } from './placeholders.js';
import { isWellFormed } from '../text/utf8.js';

export interface OutputFiles {
  /** The file for stdout (and stderr, unless `stderr` is given). */
  stdout: string;
  stderr?: string;
  /** Append to the files instead of truncating them when the run starts. */
  append?: boolean;
}

/** Stored in the run's `output` field (JSON), absolute paths. */
export type StoredOutputFiles = OutputFiles;

function checkPath(flag: string, path: unknown, known: ReadonlySet<string>): asserts path is string {
  if (typeof path !== 'string' || path === '') throw new UsageError(`${flag} '' is empty: give a file`);
  if (path.includes('\0') || !isWellFormed(path)) throw new UsageError(`invalid ${flag} ${quote(path)}: not a path a process can be given`);
  checkPlaceholders(flag, path, known);
}

/**
 * Validates output files; returns what a run's `output` field holds, given
 * the values of its placeholders (`id` among them): JSON of the files with
 * placeholders filled in, resolved against the run's directory.
 */
export function prepareOutputFiles(files: OutputFiles, cwd: string, names: readonly string[]): (values: Readonly<Record<string, string>>) => string {
  const known = new Set(['id', ...names]);
  checkPath('--output', files.stdout, known);
  if (files.stderr !== undefined) checkPath('--error', files.stderr, known);
  const path = (template: string, values: Readonly<Record<string, string>>) => {
    const filled = fillPlaceholders(template, values);
    return isAbsolute(filled) ? resolve(filled) : resolve(cwd, filled);
  };
  return (values) => {
    const stored: StoredOutputFiles = { stdout: path(files.stdout, values) };
    if (files.stderr !== undefined) stored.stderr = path(files.stderr, values);
    if (files.append) stored.append = true;
    return JSON.stringify(stored);
  };
}
