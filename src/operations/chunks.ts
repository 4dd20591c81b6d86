/**
 * How many runs one script call of a command that acts on many takes.
 * While a script runs, Redis serves nobody else (workers' claims, other
 * commands), so a command naming 100,000 runs goes in parts: each part one
 * script call that leaves a consistent state (every run of it done, or
 * none, for `fitq runs rm`), the next part after it. Sized so that one
 * call holds Redis a few milliseconds at the cost per run that `node
 * bench/run.js longest` measures (docs/benchmarks.md): about 60 µs a run
 * to hold, release or remove, twice that to restart, more on a busy server.
 */

/** Runs held or released per setHeld call. */
export const HOLD_CHUNK = 64;

/** Runs restarted per restartRuns call (each re-staged, its history kept). */
export const RESTART_CHUNK = 32;

/** Runs removed per removeRuns call: all or nothing within one. */
export const REMOVE_CHUNK = 64;

/** Runs removed per cleanRuns call. */
export const CLEAN_CHUNK = 64;

/** References (ids or prefixes) resolved per resolveRunIds call (a lookup in `ids` each). */
export const RESOLVE_CHUNK = 200;
