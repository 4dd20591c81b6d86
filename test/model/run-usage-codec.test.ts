/**
 * How a run's usage is stored: a JSON array, short enough for a listpack
 * value when the run is a plain one, every measure read back; what an
 * earlier fitq stored (a JSON object) reads the same.
 */
import { describe, expect, it } from 'vitest';
import { decodeRunUsage, encodeRunUsage, type RunUsage } from '../../src/model/run-usage.js';

const SAMPLED: RunUsage = { source: 'sampled', wallMs: 2873, cpuUserMs: 2610, cpuSystemMs: 210, peakMemoryBytes: 165_601_280, samples: 3 };
const ENFORCED: RunUsage = {
  source: 'cgroup', wallMs: 61_000, cpuUserMs: 59_000, cpuSystemMs: 1200, peakMemoryBytes: 8_000_000_000,
  memoryLimitBytes: 8_000_000_000, cpuLimit: 1, oomKills: 1, gpuPeakBytes: { '0': 21_000_000_000, '101': 4_000_000_000 },
};

describe('a run usage as stored', () => {
  it('is an array of measures by position, within 64 bytes for a plain run', () => {
    expect(encodeRunUsage(SAMPLED)).toBe('["s",2873,2610,210,165601280,3]');
    expect(Buffer.byteLength(encodeRunUsage(SAMPLED))).toBeLessThanOrEqual(64);
    expect(encodeRunUsage({ ...SAMPLED, wallMs: 2873.6, samples: undefined })).toBe('["s",2874,2610,210,165601280]');
  });

  it('reads back every measure, limits and GPU peaks included', () => {
    for (const usage of [SAMPLED, ENFORCED, { ...SAMPLED, samples: 0 }]) expect(decodeRunUsage(JSON.parse(encodeRunUsage(usage)))).toEqual(usage);
    expect(encodeRunUsage({ ...SAMPLED, oomKills: 0 })).toBe('["s",2873,2610,210,165601280,3,null,null,0]');
  });

  it('reads what an earlier fitq stored, and nothing that is no usage', () => {
    expect(decodeRunUsage({ source: 'cgroup', wallMs: 61_000, cpuUserMs: 59_000, cpuSystemMs: 1200, peakMemoryBytes: 8e9, memoryLimitBytes: 8e9, cpuLimit: 1, oomKills: 1, gpuPeakBytes: ENFORCED.gpuPeakBytes })).toEqual(ENFORCED);
    for (const bad of [null, 'x', [], ['x', 1, 2, 3, 4], ['s', 1, 2, 3], ['s', -1, 2, 3, 4], { source: 'sampled' }]) expect(decodeRunUsage(bad)).toBeUndefined();
  });
});
