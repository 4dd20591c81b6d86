/**
 * What escaped a run, found by its environment: every run gets a random
 * FITQ_RUN_TOKEN, which every process it starts inherits, daemons that left
 * its process group and session with `setsid` included. Once a run's main
 * process has exited, the worker looks through /proc for processes of its
 * own user whose environment holds that token and kills them (SIGKILL).
 *
 * It needs no helper process, so every worker on Linux does it; the keeper
 * (`--reap-escaped`, subreaper.ts) also catches processes that clear their
 * environment (`env -i`). Runs ending together share one pass over /proc,
 * and passes are at least SWEEP_INTERVAL_MS apart.
 * Without /proc (not Linux) it finds nothing.
 *
 * A pass reads only the processes that can be the runs': Linux hands out
 * pids in turn, so whatever a run started has a pid handed out after its
 * first process's and before the pass (the newest, ns_last_pid). That holds
 * while pids have not come round in the meantime, which takes pid_max
 * processes: a pass for runs spawned longer ago than pid_max processes
 * could take at MAX_FORKS_PER_MS reads every process.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** The environment variable that marks a run's processes. */
export const RUN_TOKEN_VARIABLE = 'FITQ_RUN_TOKEN';

/** A fresh token for a run. */
export function newRunToken(): string {
  return randomBytes(12).toString('hex');
}

/** Reads of /proc/<pid>/environ under way at once. */
const READ_CONCURRENCY = 32;
/**
 * Passes over /proc start at most this often: runs ending meanwhile share
 * the next one, so a stream of short runs costs a few passes a second, not
 * one per run (what is left behind lives this long at most after its run).
 */
export const SWEEP_INTERVAL_MS = 250;

/** More processes than any machine starts in a millisecond (for how long pids take to come round). */
const MAX_FORKS_PER_MS = 100;

/** A run's first process: its pid, and when it was spawned (performance.now()). */
export interface SweepSince {
  pid: number;
  atMs: number;
}

/** The highest pid, or undefined without /proc (read once). */
let pidMax: number | undefined | null = null;

function readNumber(path: string): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8'));
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which pids a pass must read: those handed out since the earliest of
 * `since` (all when one of them is unknown or too long ago to be sure).
 */
function candidates(pids: number[], since: readonly (SweepSince | undefined)[]): number[] {
  if (pidMax === null) pidMax = readNumber('/proc/sys/kernel/pid_max');
  const max = pidMax;
  // Read after the list: every pid listed was handed out before it.
  const last = max === undefined ? undefined : readNumber('/proc/sys/kernel/ns_last_pid');
  const now = performance.now();
  if (max === undefined || last === undefined || since.some((run) => run === undefined || (now - run.atMs) * MAX_FORKS_PER_MS >= max)) return pids;
  /** How many pids were handed out after `pid`, up to the newest. */
  const age = (pid: number) => (last - pid + max) % max;
  const oldest = Math.max(...since.map((run) => age(run!.pid)));
  return pids.filter((pid) => age(pid) <= oldest);
}

export class EscapedSweep {
  /** Tokens of runs waiting for the next pass, with who waits for each. */
  private waiting = new Map<string, ((killed: number[]) => void)[]>();
  /** The first process of each run waiting, when known. */
  private since = new Map<string, SweepSince | undefined>();
  private pass: Promise<void> | undefined;
  /** When the last pass started (performance.now()). */
  private lastPassAt = -Infinity;

  /**
   * Kills the processes whose environment holds `token` (the run's main
   * process has exited); resolves with their pids.
   */
  sweep(token: string, since?: SweepSince): Promise<number[]> {
    return new Promise((resolve) => {
      this.since.set(token, since);
      const waiters = this.waiting.get(token) ?? [];
      waiters.push(resolve);
      this.waiting.set(token, waiters);
      this.pass ??= new Promise<void>((passDone) => {
        const wait = this.lastPassAt + SWEEP_INTERVAL_MS - performance.now();
        if (wait > 0) setTimeout(passDone, wait);
        else setImmediate(passDone);
      }).then(() => this.runPass());
    });
  }

  private async runPass(): Promise<void> {
    const waiting = this.waiting;
    const since = [...this.since.values()];
    this.waiting = new Map();
    this.since = new Map();
    this.pass = undefined;
    this.lastPassAt = performance.now();
    const needles = new Map([...waiting.keys()].map((token) => [token, Buffer.from(`${RUN_TOKEN_VARIABLE}=${token}\0`)]));
    const killed = new Map<string, number[]>([...waiting.keys()].map((token) => [token, []]));
    const pids = candidates(await processIds(), since);
    for (let i = 0; i < pids.length; i += READ_CONCURRENCY) {
      await Promise.all(
        pids.slice(i, i + READ_CONCURRENCY).map(async (pid) => {
          const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
          if (!environ) return;
          for (const [token, needle] of needles) {
            if (!environ.includes(needle)) continue;
            try {
              process.kill(pid, 'SIGKILL');
              killed.get(token)!.push(pid);
            } catch {
              // Gone already, or not ours.
            }
          }
        }),
      );
    }
    for (const [token, waiters] of waiting) waiters.forEach((resolve) => resolve(killed.get(token)!));
  }
}

/** Every process id but this process's, or none without /proc. */
async function processIds(): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => pid !== process.pid);
}

/** The run token in a process's environment, or undefined (none, gone, or not readable: another user's, another PID namespace's). */
export async function readRunToken(pid: number): Promise<string | undefined> {
  const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
  if (!environ) return undefined;
  const prefix = `${RUN_TOKEN_VARIABLE}=`;
  for (const entry of environ.toString('latin1').split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return undefined;
}
