/**
 * Mistyped flags and commands: one line naming what was meant, exit 2.
 */
import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/cli/suggest.js';
import { fitq, newQueue } from '../support/fitq.js';

describe.concurrent('did you mean', () => {
  it.each([
    [['stage', '--resource', 'gpu=1', '--', 'true'], 'Nonexistent flag: --resource (did you mean --resources?)'],
    [['stage', '--repeats=2', '--', 'true'], 'Nonexistent flag: --repeats=2 (did you mean --repeat?)'],
    [['worker', '--concurency', '2'], 'Nonexistent flag: --concurency (did you mean --concurrency?)'],
    [['runs', '--stauts', 'staged'], 'Nonexistent flag: --stauts (did you mean --status?)'],
    [['workers', '--xyz'], 'Nonexistent flag: --xyz'],
    [['status'], "command 'status' not found; did you mean 'runs'?"],
    [['wokrer', '-r', 'gpu=1'], "command 'wokrer' not found; did you mean 'worker'?"],
    [['submit', '--', 'true'], "command 'submit' not found; did you mean 'stage'?"],
    [['pool', 'lss'], "command 'pool lss' not found; did you mean 'pool ls'?"],
    [['runs', 'shwo', 'abc'], "command 'runs shwo' not found; did you mean 'runs show'?"],
    [['frobnicate'], "command 'frobnicate' not found; see fitq --help"],
  ])('fitq %j says what was meant', async (args, message) => {
    const result = await fitq(args, { queue: newQueue() });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toBe(`Error: ${message}`);
    expect(result.stdout).toBe('');
  });

  it('measures edits and keeps very short words to exact matches', () => {
    expect(editDistance('resource', 'resources')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(closest('lr', ['env', 'label'])).toBeUndefined();
    expect(closest('from', ['from-file', 'shell'])).toBe('from-file');
  });
});
