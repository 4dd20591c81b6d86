/**
 * "The runs I just staged" in this shell: `@` is every run the last `fitq
 * stage` staged from the shell that runs this command (one run, a batch of
 * --repeat or --from-file, or a whole array), `@~N` the Nth staging before
 * it (as gflow's `@~N`), per namespace. Kept in a small state file per shell,
 * named by the shell's pid and its start time (from /proc), so a shell that
 * reuses the pid of an old one does not see its runs:
 * `$FITQ_STATE_DIR`, else `$XDG_STATE_HOME/fitq`, else `~/.local/state/fitq`.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { MAX_DEPENDENCIES } from '../model/parked.js';

/** Stagings remembered per namespace (so `@~99` is the oldest one can name). */
const KEPT = 100;
/** Run ids remembered of one staging that is no array (more could not be waited for by one run anyway). */
const KEPT_IDS = MAX_DEPENDENCIES;
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

/** What one `fitq stage` staged: its runs (`count` of them, the ids of KEPT_IDS at most), or an array, as a whole. */
export type Staging = { ids: string[]; count: number } | { array: string };

/** Per namespace, oldest first; a plain id (as older fitq kept them) is a staging of that one run. */
type State = Record<string, (Staging | string)[]>;

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

/** The staging a shorthand names in this shell and namespace (`namespace`: the key prefix). */
export function resolveShorthand(ref: string, namespace: string): Staging {
  const match = /^@(?:~(\d+))?$/.exec(ref);
  if (!match) throw new UsageError(`expected a run or array id, @ (the runs last staged from this shell) or @~N (the Nth staging before), got ${quote(ref)}`);
  const back = Number(match[1] ?? 0);
  const stagings = readState()[namespace] ?? [];
  const staging = stagings[stagings.length - 1 - back];
  if (staging === undefined) {
    throw new UsageError(
      stagings.length === 0
        ? `${quote(ref)} names the runs last staged from this shell, but none was staged from it in this namespace`
        : `${quote(ref)} is beyond the ${stagings.length} staging${stagings.length === 1 ? '' : 's'} from this shell in this namespace`,
    );
  }
  if (typeof staging === 'string') return { ids: [staging], count: 1 };
  if ('ids' in staging && staging.count > staging.ids.length) {
    throw new UsageError(
      `${quote(ref)} names ${staging.count} runs staged together, more than fitq keeps the ids of (${KEPT_IDS}): stage so many as an array (--array), which is named as a whole`,
    );
  }
  return staging;
}

/** The run ids a shorthand names; for an array, its id (`array`), standing for all its runs. */
export function shorthandRuns(ref: string, namespace: string): { ids: string[]; arrays: string[] } {
  const staging = resolveShorthand(ref, namespace);
  return 'array' in staging ? { ids: [], arrays: [staging.array] } : { ids: staging.ids, arrays: [] };
}

/**
 * Remembers what `fitq stage` just staged from this shell: its runs, or the
 * array they make (best effort: a state directory that cannot be written
 * only loses `@`).
 */
export function rememberStaged(namespace: string, ids: readonly string[], array?: string): void {
  if (ids.length === 0) return;
  const staging: Staging = array === undefined ? { ids: ids.slice(0, KEPT_IDS), count: ids.length } : { array };
  try {
    mkdirSync(stateDir(), { recursive: true, mode: 0o700 });
    const file = stateFile();
    const state = readState(file);
    state[namespace] = [...(state[namespace] ?? []), staging].slice(-KEPT);
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
