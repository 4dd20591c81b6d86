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
 */
import { randomBytes } from 'node:crypto';
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

export class EscapedSweep {
  /** Tokens of runs waiting for the next pass, with who waits for each. */
  private waiting = new Map<string, ((killed: number[]) => void)[]>();
  private pass: Promise<void> | undefined;
  /** When the last pass started (performance.now()). */
  private lastPassAt = -Infinity;

  /**
   * Kills the processes whose environment holds `token` (the run's main
   * process has exited); resolves with their pids.
   */
  sweep(token: string): Promise<number[]> {
    return new Promise((resolve) => {
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
    this.waiting = new Map();
    this.pass = undefined;
    this.lastPassAt = performance.now();
    const needles = new Map([...waiting.keys()].map((token) => [token, Buffer.from(`${RUN_TOKEN_VARIABLE}=${token}\0`)]));
    const killed = new Map<string, number[]>([...waiting.keys()].map((token) => [token, []]));
    const pids = await processIds();
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
