/**
 * fitq's exit codes: the one table every command exits by (README, "Exit
 * codes"). Where a command waits for runs (`fitq wait`, `logs -f`, `stage
 * --wait`), a run's own exit code is passed on as it is
 * (model/run-exit-code.ts): it can be any of these too, and `fitq runs show
 * ID` (or `--json`) tells them apart.
 */
export const EXIT = {
  /** Done; the runs waited for completed. */
  ok: 0,
  /**
   * Not done, though the input was right: Redis unreachable or refusing a
   * command, a GPU driver `--gpus auto` cannot use, a run that changed
   * meanwhile (claimed before `fitq update` wrote, restarted by someone
   * else). And a run that ended canceled, lost or rejected, or failed
   * before it started (command not found).
   */
  failed: 1,
  /** A selection (--status, --label, --array) matched no run: nothing done, as grep and pkill exit when nothing matches. */
  nothingMatched: 1,
  /**
   * Bad input, nothing done: a bad flag or value, an unknown run or array,
   * a run in a state the command does not change (`fitq update` of a
   * running run, `fitq restart` of one that has not ended).
   */
  usage: 2,
  /** `fitq wait --timeout` gave up before every run ended (EX_TEMPFAIL: waiting again may see them end). */
  gaveUp: 75,
  /** The run ended `timeout`: past its time limit, as GNU timeout exits. */
  timeLimit: 124,
  /** Interrupted (Ctrl-C, SIGTERM) while waiting for runs or following one: the runs go on. */
  interrupted: 130,
} as const;
