/**
 * Fair share (`fitq share`): users' shares, the weights and half-life of
 * their usage, and the switch; each change is one script call
 * (setFairShare-2.lua), and the claim orders by it atomically
 * (lua/includes/fairshare/).
 */
import { UsageError } from '../errors.js';
import {
  forgetOps,
  halfLifeOp,
  preemptOp,
  shareOps,
  shareRemoveOps,
  switchOp,
  weightOps,
  weightRemoveOps,
  type FairShareOp,
  type FairShareState,
} from '../model/fair-share.js';
import type { QueueContext } from './context.js';

/** What to change, as typed: any of it, at least one thing. */
export interface FairShareChange {
  /** `alice=2`: a user's share (1 without one). */
  shares?: readonly string[];
  /** Users whose share goes back to 1. */
  removeShares?: readonly string[];
  /** `gpu=10`: weight per unit per second (`run`: per running run). */
  weights?: readonly string[];
  /** Weights back to their defaults. */
  removeWeights?: readonly string[];
  /** `7d`: how long usage takes to halve. */
  halfLife?: string;
  /** Whether the claim orders by fair share. */
  on?: boolean;
  /** Whether runs of users over their share may be preempted (lua/includes/preemption/victimTerms.lua). */
  preempt?: boolean;
  /** Users whose usage is forgotten; `all`: everyone's. */
  forget?: readonly string[] | 'all';
}

/** The change as the script's ops, every part checked first (a UsageError quoting what is wrong, nothing changed). */
function opsOf(change: FairShareChange): FairShareOp[] {
  const ops = [
    ...shareOps(change.shares ?? []),
    ...shareRemoveOps(change.removeShares ?? []),
    ...weightOps(change.weights ?? []),
    ...weightRemoveOps(change.removeWeights ?? []),
    ...(change.halfLife === undefined ? [] : [halfLifeOp(change.halfLife)]),
    ...(change.on === undefined ? [] : [switchOp(change.on)]),
    ...(change.preempt === undefined ? [] : [preemptOp(change.preempt)]),
    ...(change.forget === undefined ? [] : forgetOps(change.forget === 'all' ? [] : change.forget)),
  ];
  if (ops.length === 0) throw new UsageError('name what to change, e.g. alice=2 bob=1, --weight gpu=10, --half-life 7d, --on, --off or --preempt');
  return ops;
}

/** Changes fair share in one step; returns it as it now is. */
export async function changeFairShare(ctx: QueueContext, change: FairShareChange): Promise<FairShareState> {
  await ctx.scripts.setFairShare(opsOf(change));
  return ctx.scripts.readFairShare();
}

/** Fair share as the claim sees it now: settings, and users in the claim's order. */
export const readFairShare = (ctx: QueueContext): Promise<FairShareState> => ctx.scripts.readFairShare();
