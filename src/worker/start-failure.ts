/**
 * Why a run's command could not start, in the words of a shell ("command
 * not found: foo", "bad interpreter: ...", "permission denied: ..."), or
 * what the worker itself ran out of; found before spawning where it can be
 * (preflight), since the gate runs the command with `exec`.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { oneLine } from '../text/quote.js';
import { shortageOf } from './shortage.js';

/** A run that never started: `returned` for want of something the worker itself lacks (see shortage.ts). */
export interface StartFailure {
  status: 'failed' | 'returned';
  reason: string;
}

/** Why a command could not start, in the words of a shell: "command not found: foo"; or what the worker ran out of. */
export function spawnFailure(code: string | undefined, command: string, cwd: string, message: string): StartFailure {
  const shortage = shortageOf(code, message);
  if (shortage !== undefined) return { status: 'returned', reason: shortage };
  // A name without a slash is looked up in PATH; a path is relative to the run's directory.
  const path = command.includes('/') ? resolve(cwd, command) : undefined;
  // Shown in logs and tables: on one line, whatever the name holds.
  const file = oneLine(command);
  if (path !== undefined && isDirectory(path)) return { status: 'failed', reason: `is a directory: ${file}` };
  if (code === 'ENOENT') {
    // The file is there, so what is missing is what runs it.
    if (path !== undefined && existsSync(path)) {
      const interpreter = scriptInterpreter(path);
      if (interpreter) return { status: 'failed', reason: `bad interpreter: ${file} (${oneLine(interpreter)} not found)` };
      return { status: 'failed', reason: `could not start ${file}: its interpreter or dynamic loader was not found` };
    }
    return { status: 'failed', reason: `command not found: ${file}` };
  }
  if (code === 'EACCES') return { status: 'failed', reason: `permission denied: ${file}` };
  return { status: 'failed', reason: `could not start ${file}: ${message}` };
}

/** The `#!` interpreter of a script, as written (a stray \r of a CRLF script included). */
function scriptInterpreter(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(256);
    const text = head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString('utf8');
    const match = /^#![ \t]*([^ \t\n]+)/.exec(text);
    return match?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether a path names a directory (false when it cannot be looked at). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  // Most PATH entries do not hold the name: find that out without an exception.
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the command could not be started, found before spawning (the gate
 * (child.ts) runs it with `exec`, whose failure would only be an exit code): a
 * name looked up in PATH, or a path, that is missing, not executable, a
 * directory, or a script whose interpreter is missing.
 */
export function preflight(file: string, cwd: string, env: Record<string, string>): StartFailure | undefined {
  if (!file.includes('/')) {
    const dirs = (env.PATH ?? '').split(':');
    const candidate = (dir: string) => resolve(cwd, dir || '.', file);
    // Most runs find theirs in the first entries: resolved one by one.
    if (dirs.some((dir) => isExecutableFile(candidate(dir)))) return undefined;
    const present = dirs.map(candidate).some((path) => existsSync(path) && !isDirectory(path));
    return spawnFailure(present ? 'EACCES' : 'ENOENT', file, cwd, '');
  }
  const path = resolve(cwd, file);
  if (!existsSync(path)) return spawnFailure('ENOENT', file, cwd, '');
  if (isDirectory(path)) return spawnFailure('EISDIR', file, cwd, '');
  if (!isExecutableFile(path)) return spawnFailure('EACCES', file, cwd, '');
  const interpreter = scriptInterpreter(path);
  if (interpreter !== undefined && isAbsolute(interpreter) && !isExecutableFile(interpreter)) return spawnFailure('ENOENT', file, cwd, '');
  return undefined;
}
