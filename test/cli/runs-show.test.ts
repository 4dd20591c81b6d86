/**
 * `fitq runs show` as a person reads it: every label apart from its value,
 * the values in one column, and every attempt of the run (the earlier ones
 * and the current one), as the dashboard's run page lists them.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';

describe('fitq runs show', () => {
  it('lines up the values after their labels, and lists every attempt, the current one too', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    for (const args of [
      ['--run-id', 'train1', '--retry-on-failure', '1', '--', 'sh', '-c', 'exit 3'],
      ['--run-id', 'eval1', '--after-end', 'train1', '--', 'true'],
    ]) {
      const staged = await fitq(['stage', ...args], { queue });
      expect(staged.exitCode, staged.stderr).toBe(0);
    }
    const { worker } = await startTestWorker(queue, { resources: 'cpu=1', runOnce: true, name: 'w1' });
    await worker.done;
    expect(await client.waitForEnd('eval1')).toMatchObject({ status: 'completed' });

    const shown = await fitq(['runs', 'show', 'train1'], { queue });
    expect(shown.exitCode, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    const attemptsAt = lines.indexOf('attempts:');
    expect(attemptsAt).toBeGreaterThan(0);
    const fields = lines.slice(0, attemptsAt);
    // Each value starts in the same column, one space at least after the longest label.
    const columns = new Set(fields.map((line) => /^[a-z -]+:\s+/.exec(line)?.[0].length));
    expect([...columns]).toHaveLength(1);
    expect(fields).toContainEqual(expect.stringMatching(/^dependents: +eval1$/));
    expect(fields).toContainEqual(expect.stringMatching(/^status: +failed$/));
    // Both attempts: the one retried, and the one that ended the run.
    expect(lines.slice(attemptsAt + 1)).toEqual([
      expect.stringMatching(/^ {2}#1 failed \(exit code 3\), on w1, started \S+, ran \S+$/),
      expect.stringMatching(/^ {2}#2 failed \(exit code 3\), on w1, started \S+, ran \S+$/),
    ]);
  });
});
