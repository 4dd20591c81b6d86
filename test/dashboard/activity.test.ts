/** The overview's per-minute activity and staged shapes, computed from run summaries and the fit index's shape names. */
import { describe, expect, it } from 'vitest';
import { activityOf, MINUTE_MS } from '../../src/dashboard/activity.js';
import { describeShape, type RunSummary } from '../../src/model/run-summary.js';

const NOW = Date.UTC(2026, 10, 25, 12, 30, 20);
const minuteStart = Math.floor(NOW / MINUTE_MS) * MINUTE_MS;

describe('activityOf', () => {
  it('counts starts and ends in their minute over the last hour, with mean and median durations of the runs that ended', () => {
    const runs: RunSummary[] = [
      // Started and completed this minute, 2 s.
      { status: 'completed', stagedAt: minuteStart, startedAt: minuteStart + 1000, endedAt: minuteStart + 3000 },
      // Started 2 minutes ago, failed 4 s later.
      { status: 'failed', stagedAt: 0, startedAt: minuteStart - 2 * MINUTE_MS, endedAt: minuteStart - 2 * MINUTE_MS + 4000 },
      // Canceled while staged: ended, without a duration.
      { status: 'canceled', stagedAt: 0, endedAt: minuteStart + 5000 },
      // Still running.
      { status: 'running', stagedAt: 0, startedAt: minuteStart - 59 * MINUTE_MS },
      // Before the window: not counted.
      { status: 'completed', stagedAt: 0, startedAt: minuteStart - 61 * MINUTE_MS, endedAt: minuteStart - 60 * MINUTE_MS - 1 },
      { status: 'staged', stagedAt: NOW },
    ];
    const activity = activityOf(runs, NOW);
    expect(activity.minutes).toHaveLength(60);
    expect(activity.minutes[0]!.start).toBe(minuteStart - 59 * MINUTE_MS);
    const last = activity.minutes[59]!;
    expect(last).toEqual({ start: minuteStart, started: 1, completed: 1, endedOtherwise: 1, meanDurationMs: 2000 });
    expect(activity.minutes[57]).toEqual({ start: minuteStart - 2 * MINUTE_MS, started: 1, completed: 0, endedOtherwise: 1, meanDurationMs: 4000 });
    expect(activity.minutes[0]!.started).toBe(1);
    expect(activity.started).toBe(3);
    expect(activity.ended).toBe(3);
    expect(activity.medianDurationMs).toBe(2000);
    expect(activity.maxDurationMs).toBe(4000);
  });

  it('has no durations when nothing ended', () => {
    const activity = activityOf([{ status: 'staged', stagedAt: NOW }], NOW);
    expect(activity.started + activity.ended).toBe(0);
    expect(activity.medianDurationMs).toBeUndefined();
    expect(activity.minutes.every((minute) => minute.meanDurationMs === undefined)).toBe(true);
  });
});

describe('describeShape', () => {
  it('reads demands, pinned devices and a time limit out of a shape', () => {
    expect(describeShape('gpu=1,mem=8000000000;gpus=0,3;t=600000')).toEqual({ shape: 'gpu=1,mem=8000000000;gpus=0,3;t=600000', demands: 'gpu=1 mem=8G', gpus: [0, 3], timeLimitMs: 600_000 });
    expect(describeShape('none')).toEqual({ shape: 'none', demands: '(none)', gpus: [] });
    expect(describeShape('slot=0.5')).toEqual({ shape: 'slot=0.5', demands: 'slot=0.5', gpus: [] });
  });
});
