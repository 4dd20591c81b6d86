/**
 * When a run cannot start because its worker is short of something of its
 * own (file descriptors, processes, memory), the run is not at fault: it is
 * put back as staged, spending no retry, and the worker claims nothing for a
 * while (claims.ts). Any other reason a run cannot start is the run's: it
 * ends failed.
 */
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
 * for the spawn helper's own. Node leaks the pipes of a spawn that fails for
 * want of descriptors, so a spawn that would is not tried (the helper checks
 * its descriptors before each spawn: spawner/helper.js).
 */
export const SPAWN_DESCRIPTORS = 16;
