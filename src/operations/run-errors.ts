/** The errors of operations on runs that name a run no longer there. */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { refusal, SCRIPT_CODES } from '../queue/script-codes.js';

/** The one error for a run id that names no run. */
export function unknownRun(ref: string): UsageError {
  return refusal(SCRIPT_CODES.unknownRun, ref)!;
}

/**
 * A watched run was removed before its end could be read: by `fitq runs rm`
 * or `runs clean`, or by history retention as other runs ended after it.
 */
export class RunRemovedError extends UsageError {
  constructor(readonly runId: string) {
    super(`run ${quote(runId)} was removed before its end could be read (fitq runs rm, fitq runs clean, or history retention: fitq retention)`);
  }
}
