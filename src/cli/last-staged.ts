/**
 * "The run I just staged" in this shell: `@` is the last run `fitq stage`
 * staged from the shell that runs this command, `@~N` the Nth before it
 * (as gflow's `@~N`), per namespace. Kept in a small state file per shell,
 * named by the shell's pid and its start time (from /proc), so a shell that
 * reuses the pid of an old one does not see its runs:
 * `$FITQ_STATE_DIR`, else `$XDG_STATE_HOME/fitq`, else `~/.local/state/fitq`.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { quote } from '../queue/names.js';

/** Runs remembered per namespace (so `@~99` is the oldest one can name). */
const KEPT = 100;
/** State files of shells not seen for this long are deleted. */
const STALE_MS = 30 * 86_400_000;

export function stateDir(): string {
  if (process.env.FITQ_STATE_DIR) return process.env.FITQ_STATE_DIR;
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'fitq');
}

/** The shell this command runs in: its pid and start time (clock ticks since boot, field 22 of /proc/PID/stat). */
function shellId(): string {
  const pid = process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${pid}-${fields[19] ?? '0'}`;
  } catch {
    return `${pid}-0`;
  }
}

function stateFile(): string {
  return join(stateDir(), `shell-${shellId()}.json`);
}

type State = Record<string, string[]>;

function readState(file = stateFile()): State {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return state && typeof state === 'object' && !Array.isArray(state) ? (state as State) : {};
  } catch {
    return {};
  }
}

/** Whether a dependency reference is a shorthand (`@`, `@~N`). */
export function isShorthand(ref: string): boolean {
  return ref.startsWith('@');
}

/** The run id a shorthand names in this shell and namespace (`namespace`: the key prefix). */
export function resolveShorthand(ref: string, namespace: string): string {
  const match = /^@(?:~(\d+))?$/.exec(ref);
  if (!match) throw new UsageError(`expected a run id, @ (the last run staged from this shell) or @~N (the Nth before it), got ${quote(ref)}`);
  const back = Number(match[1] ?? 0);
  const runs = readState()[namespace] ?? [];
  const id = runs[runs.length - 1 - back];
  if (id === undefined) {
    throw new UsageError(
      runs.length === 0
        ? `${quote(ref)} names the last run staged from this shell, but none was staged from it in this namespace`
        : `${quote(ref)} is beyond the ${runs.length} run${runs.length === 1 ? '' : 's'} staged from this shell in this namespace`,
    );
  }
  return id;
}

/** Remembers runs just staged from this shell (best effort: a state directory that cannot be written only loses `@`). */
export function rememberStaged(namespace: string, ids: readonly string[]): void {
  if (ids.length === 0) return;
  try {
    mkdirSync(stateDir(), { recursive: true, mode: 0o700 });
    const file = stateFile();
    const state = readState(file);
    state[namespace] = [...(state[namespace] ?? []), ...ids].slice(-KEPT);
    const temporary = `${file}.${process.pid}`;
    writeFileSync(temporary, JSON.stringify(state), { mode: 0o600 });
    renameSync(temporary, file);
    removeStale();
  } catch {
    // Not worth failing a stage for.
  }
}

function removeStale(): void {
  const dir = stateDir();
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('shell-')) continue;
    try {
      if (now - statSync(join(dir, name)).mtimeMs > STALE_MS) unlinkSync(join(dir, name));
    } catch {
      // gone meanwhile
    }
  }
}
