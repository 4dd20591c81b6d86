/**
 * The claim loop's wake-ups coalesce: one loop at a time, and a wake-up
 * while it runs makes it look once more. A wake-up that comes after its last
 * look but before it settled (two replies read in one turn: a claim's and a
 * run end's) must not be lost: with the poll minutes away, the run it
 * announced would wait that long. Here the loop's collaborators are plain
 * objects (the loop's own logic is under test; its claims against Redis are
 * tested everywhere else), and the late wake-up comes from the observer,
 * which the loop tells exactly at that point.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ClaimResult } from '../../src/queue/claim-reply.js';
import type { Scripts } from '../../src/queue/scripts.js';
import { ClaimLoop, type ClaimParts } from '../../src/worker/claims.js';
import type { ResolvedWorkerOptions } from '../../src/worker/options.js';

function claimLoop(replies: ClaimResult[], onSettled: (loop: ClaimLoop) => void) {
  const calls: string[] = [];
  const scripts = {
    claimRun: async () => {
      const reply = replies.shift() ?? { code: 'idle', ignored: [] };
      calls.push(reply.code);
      return reply;
    },
  } as unknown as Scripts;
  const parts: ClaimParts = {
    options: { name: 'w', concurrency: 0, policy: 'backfill', timeLimits: {} } as unknown as ResolvedWorkerOptions,
    scripts,
    logger: pino({ level: 'silent' }),
    lease: { token: 't', drained: false, executor: { size: 0, starting: 0, running: 0 } } as unknown as ClaimParts['lease'],
    lifecycle: { stopping: false } as ClaimParts['lifecycle'],
    ignoredRuns: { report: async () => undefined } as unknown as ClaimParts['ignoredRuns'],
    fail: () => undefined,
    finished: () => undefined,
    observer: { woken: () => undefined, claimed: () => undefined, settled: () => onSettled(loop) },
    evicting: () => false,
  };
  const loop = new ClaimLoop(parts);
  return { loop, calls };
}

describe('claim loop wake-ups', () => {
  it('looks again for a wake-up that came after its last look, before it settled', async () => {
    let late = true;
    const { loop, calls } = claimLoop([], (self) => {
      if (late) self.wake();
      late = false;
    });
    loop.wake();
    await loop.current;
    // The late wake-up started a second loop: it claims once more.
    await loop.current;
    expect(calls).toEqual(['idle', 'idle']);
    expect(loop.current).toBeUndefined();
  });

  it('coalesces wake-ups during a loop into one more look', async () => {
    const { loop, calls } = claimLoop([], () => undefined);
    loop.wake();
    loop.wake();
    loop.wake();
    await loop.current;
    expect(calls).toEqual(['idle', 'idle']);
  });
});
