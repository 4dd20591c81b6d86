/**
 * How much one call of an upkeep script does: while a script runs, Redis
 * serves nobody else, so upkeep goes in bounded steps and its callers loop
 * (docs/architecture.md, Upkeep in bounded steps).
 */

/**
 * Jobs and events one reconcileRuns call looks at (about): each costs some
 * 35 µs of Redis's time (a job BullMQ added, read and checked), so a call
 * holds Redis about 4 ms at most (`node bench/run.js longest`).
 */
export const RECONCILE_BUDGET = 100;

/**
 * Dead workers one reapWorkers call reaps: each one's runs end (or are
 * staged again) in that call, so a call costs what their runs' ends do; a
 * few workers keep it to a few ms. More go in the next calls.
 */
export const REAP_BATCH = 5;
