/**
 * `fitq hold` / `fitq release`: a held run stays staged but is never
 * claimed (status `held`); released, it goes back to the fit index at its
 * original place in the order (see setHeld-*.lua). Each run is judged on
 * its own: a run that is not staged is refused with the reason, the others
 * are done.
 */
import { HOLD_CHUNK } from './chunks.js';
import type { QueueContext } from './context.js';
import { resolveRunIds } from './ids.js';
import { requestSigner } from './requests.js';
import { refusedRequestMessage } from '../security/request-signature.js';


export interface HoldResult {
  id: string;
  /** held / released: done; unchanged: already so; refused: not staged (see `status`); notYours: another user's signed run; removed: gone meanwhile. */
  outcome: 'held' | 'released' | 'unchanged' | 'refused' | 'notYours' | 'removed';
  /** The run's status, for a refused one. */
  status?: string;
  /** One line saying what happened. */
  message: string;
}

const WHERE: Readonly<Record<string, string>> = {
  staged: 'it may start now',
  delayed: 'it waits for its begin time',
  deps: 'it waits for its dependencies',
};

export async function setHeld(ctx: QueueContext, mode: 'hold' | 'release', refs: readonly string[]): Promise<HoldResult[]> {
  const ids = [...new Set(await resolveRunIds(ctx, refs))];
  const results: HoldResult[] = [];
  const requests = await requestSigner(ctx, mode);
  for (let i = 0; i < ids.length; i += HOLD_CHUNK) {
    const chunk = ids.slice(i, i + HOLD_CHUNK);
    const outcomes = await ctx.scripts.setHeld(mode, chunk.map((id) => [id, requests.of(id)] as const));
    outcomes.forEach(({ outcome, detail }, j) => {
      const id = chunk[j]!;
      switch (outcome) {
        case 'held':
          results.push({ id, outcome, message: `Run ${id} held (fitq release ${id} to let it start)` });
          break;
        case 'released':
          results.push({ id, outcome, message: `Run ${id} released: ${WHERE[detail] ?? detail}` });
          break;
        case 'unchanged':
          results.push({ id, outcome, message: mode === 'hold' ? `Run ${id} is already held` : `Run ${id} is not held` });
          break;
        case 'notStaged':
          results.push({
            id, outcome: 'refused', status: detail,
            message: `Run ${id} is ${detail}: only a staged run can be ${mode === 'hold' ? 'held' : 'released'}`,
          });
          break;
        case 'notYours':
          results.push({ id, outcome, message: `Run ${id} not ${mode === 'hold' ? 'held' : 'released'}: ${refusedRequestMessage(mode, id, detail, requests.requester)}` });
          break;
        default:
          results.push({ id, outcome: 'removed', message: `Run ${id} was removed meanwhile` });
      }
    });
  }
  return results;
}
