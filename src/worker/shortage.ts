/**
 * When a run cannot start because its worker is short of something of its
 * own (file descriptors, processes, memory), the run is not at fault: it is
 * put back as staged, spending no retry, and the worker claims nothing for a
 * while (claims.ts). Any other reason a run cannot start is the run's: it
 * ends failed.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** What the worker ran out of, by the error code Node gives. */
const SHORTAGES: Readonly<Record<string, string>> = {
  EMFILE: 'ran out of file descriptors',
  ENFILE: "found its machine's file descriptors used up",
  EAGAIN: 'could not start another process',
  ENOMEM: 'ran out of memory',
};

/** "ran out of file descriptors (spawn sh EMFILE)", or undefined when the error says nothing of the worker's own means. */
export function shortageOf(code: string | undefined, detail: string): string | undefined {
  const what = code === undefined ? undefined : SHORTAGES[code];
  return what === undefined ? undefined : `${what} (${detail})`;
}

/**
 * Descriptors to have free before spawning a run: a socket pair for each of
 * its three pipes and the pipe that reports a failed exec, with some left
 * for the worker's own (a Redis reconnect). Node leaks the pipes of a spawn
 * that fails for want of descriptors, so a spawn that would is not tried.
 */
export const SPAWN_DESCRIPTORS = 16;

/**
 * Why this process has too few descriptors free to spawn a run (Linux: its
 * open descriptors against its soft limit, read now, as `prlimit` may
 * change it), or undefined when it has enough or cannot tell.
 */
export function descriptorShortage(): string | undefined {
  let limit: number;
  let open: number;
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft === undefined) return undefined;
    limit = Number(soft);
    // (Less the one reading it.)
    open = readdirSync('/proc/self/fd').length - 1;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return code === 'EMFILE' || code === 'ENFILE' ? shortageOf(code, message) : undefined;
  }
  if (limit - open >= SPAWN_DESCRIPTORS) return undefined;
  return shortageOf('EMFILE', `${open} open, its limit ${limit}`);
}
