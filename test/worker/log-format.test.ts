/**
 * The worker's pretty log, as people read it: one line per event (the
 * fields JSON logs carry are not printed again under it), amounts in human
 * units (`mem=1G`, not bytes), a started run's time limit on its line.
 */
import { describe, expect, it } from 'vitest';
import { fitq, newQueue } from '../support/fitq.js';

describe("the worker's pretty log", () => {
  it('says each event on one line, amounts in human units', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '-r', 'cpu=1 mem=500M', '--time-limit', '2h', '--', 'sh', '-c', 'echo hi; exit 3'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const worker = await fitq(['worker', '-r', 'cpu=2 mem=1G', '--run-once', '--name', 'pw'], { queue, timeoutMs: 60_000 });
    expect(worker.exitCode, worker.stderr).toBe(0);
    const lines = worker.stdout.trimEnd().split('\n');
    const stamp = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|ERROR): /;
    // Log lines and the run's echoed output, nothing else (no field lines under an event).
    expect(lines.filter((line) => !stamp.test(line) && !line.startsWith(`${id} | `)), worker.stdout).toEqual([]);
    const said = lines.filter((line) => stamp.test(line)).map((line) => line.replace(stamp, ''));
    expect(said).toContain('Worker resources: cpu=2 mem=1G');
    expect(said).toContain(`Scheduling run ${id} (requires cpu=1 mem=500M)`);
    expect(said).toContain(`Run ${id} started (time limit 2h)`);
    expect(said).toContain(`Run ${id} failed (exit code 3)`);
    expect(said.filter((line) => line.includes(id))).toHaveLength(3);
  });

  it("names an array's slot as the array's, never as a resource the run demands", async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '-r', 'cpu=1', '--param', 'n=1,2', '--array', '%1', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const array = /Staged array ([0-9a-f]{12})/.exec(staged.stderr)?.[1];
    expect(array, staged.stderr).toBeDefined();
    const worker = await fitq(['worker', '-r', 'cpu=2', '--run-once', '--name', 'pa'], { queue, timeoutMs: 60_000 });
    expect(worker.exitCode, worker.stderr).toBe(0);
    const scheduling = worker.stdout.split('\n').filter((line) => line.includes('Scheduling run'));
    expect(scheduling, worker.stdout).toHaveLength(2);
    for (const line of scheduling) {
      expect(line).toMatch(new RegExp(`\\(requires cpu=1; a slot of array ${array!}\\)$`));
      expect(line).not.toContain('array.');
    }
  });
});
