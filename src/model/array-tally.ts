/**
 * How the runs of an array stand, for the runs that wait for the whole
 * array (`fitq stage --after ARRAY`, or `--after @` after an array): the
 * scripts count them in the `arrays:tally` hash as they are staged, end,
 * are restarted or removed (lua/includes/arrayTally.lua, tallyArrayRun.lua)
 * and judge such dependencies by it, as Slurm judges a job array. fitq
 * reads it (operations/array-tallies.ts) to say why a run waits; it
 * decides nothing.
 */

export interface ArrayTally {
  /** Runs staged, held or running. */
  open: number;
  /** Runs completed. */
  ok: number;
  /** Runs that ended otherwise, or were removed before they ended. */
  notok: number;
}

/** The tally of an array as the listed runs say (a run not listed, such as one removed, is not counted). */
export function tallyOfRuns(statuses: Iterable<string>, isEnded: (status: string) => boolean): ArrayTally {
  const tally: ArrayTally = { open: 0, ok: 0, notok: 0 };
  for (const status of statuses) {
    if (status === 'completed') tally.ok++;
    else if (isEnded(status)) tally.notok++;
    else tally.open++;
  }
  return tally;
}
