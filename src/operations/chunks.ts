/**
 * How many runs one script call of a command that acts on many takes.
 * While a script runs, Redis serves nobody else (workers' claims, other
 * commands), so a command naming 100,000 runs goes in parts: each part one
 * script call that leaves a consistent state (every run of it done, or
 * none, for `fitq runs rm`), the next part after it. Sized so that one
 * call holds Redis a few milliseconds at the cost per run that `node
 * bench/run.js longest` measures (docs/benchmarks.md): about 60 µs a run
 * to hold, release or remove, twice that to restart; a part of 64 runs
 * (32 to restart) took 3.5 ms at the median but up to 15 to 27 ms on the
 * shared 2-core box, hence half that.
 */

/**
 * Runs staged per stageRuns call: a larger batch goes as several calls,
 * hidden from readers until committed. A call of 500 held Redis 32 ms on
 * the idle 2-core box (`node bench/run.js staging`), some 65 µs a run.
 */
export const STAGE_CHUNK = 100;

/** Runs held or released per setHeld call. */
export const HOLD_CHUNK = 32;

/** Runs restarted per restartRuns call (each re-staged, its history kept). */
export const RESTART_CHUNK = 16;

/** Runs removed per removeRuns call: all or nothing within one. */
export const REMOVE_CHUNK = 32;

/** Runs removed per cleanRuns call. */
export const CLEAN_CHUNK = 32;

/** References (ids or prefixes) resolved per resolveRunIds call (a lookup in `ids` each). */
export const RESOLVE_CHUNK = 200;

/**
 * Runs of waiting-children or failed counted by status per countRunStatuses
 * call (/metrics): a read of one field each, about 4 µs a run with the
 * checks around it (a part of 1,000 took 3.7 ms at the median, 15 ms at
 * worst, with 100,000 canceled runs on the idle 2-core box).
 */
export const STATUS_COUNT_CHUNK = 500;
