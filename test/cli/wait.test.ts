/**
 * `fitq wait` and `fitq stage --wait/--follow` through real processes: the
 * exit code rule (one run: its own; many: the first failure's in the order
 * given), unknown runs (exit 2), a selection matching nothing (exit 1), --timeout (exit 75), a worker killed with
 * SIGKILL under a waited run (lost once its lease runs out).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, spawnFitq } from '../support/fitq.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { killRememberedGroup, rememberGroup, type RememberedGroup } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import type { RunRecord } from '../../src/model/run-record.js';

const tempDirs: string[] = [];
const runGroups: RememberedGroup[] = [];

afterEach(() => {
  for (const group of runGroups.splice(0)) killRememberedGroup(group);
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});


describe('fitq wait', () => {
  it('exits with the run’s code: 0 completed, its exit code, 128 + a signal, 1 with the reason when canceled', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const stage = async (command: string[]) => (await client.stage({ command, resources: 'foo=1' })).runs[0]!.id;
    const ok = await stage(['true']);
    const three = await stage(['sh', '-c', 'exit 3']);
    const killed = await stage(['sh', '-c', 'kill -KILL $$']);
    const canceled = await stage(['true']);
    await client.cancelRun(canceled);
    // Waiting begins before any worker: the runs are staged.
    const waits = [ok, three, killed, canceled].map((id) => fitq(['wait', id], { queue }));
    spawnCliWorker(queue, ['-r', 'foo=1', '--run-once']);
    const [a, b, c, d] = await Promise.all(waits);
    expect(a).toEqual({ exitCode: 0, stdout: '', stderr: `run ${ok} completed` });
    expect(b).toEqual({ exitCode: 3, stdout: '', stderr: `run ${three} failed: exit code 3` });
    expect(c).toEqual({ exitCode: 137, stdout: '', stderr: `run ${killed} failed: killed by signal SIGKILL` });
    expect(d).toEqual({ exitCode: 1, stdout: '', stderr: `run ${canceled} canceled while staged` });
  });

  it('waits for several runs: 0 if all completed, else the first failure’s code in the order given; --json lists them', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids = (await client.stage([
      { command: ['sh', '-c', 'sleep 0.3; exit 5'], labels: { sweep: 'a' } },
      { command: ['true'], labels: { sweep: 'a' } },
      { command: ['sh', '-c', 'exit 7'], labels: { sweep: 'a' } },
    ])).runs.map((run) => run.id);
    const done = (await client.stage({ command: ['true'], repeat: 200, labels: { sweep: 'b' } })).runs.map((run) => run.id);
    spawnCliWorker(queue, ['-r', 'cpu=4', '--concurrency', '4']);
    const [given, reversed, byLabel, many] = await Promise.all([
      fitq(['wait', ...ids], { queue }),
      fitq(['wait', ids[2]!, ids[1]!, ids[0]!, '--json'], { queue }),
      fitq(['wait', '--label', 'sweep=a', '-q'], { queue }),
      fitq(['wait', '--label', 'sweep=b', '-q', '--json'], { queue }),
    ]);
    expect(given.exitCode).toBe(5);
    expect(given.stderr.split('\n').sort()).toEqual([
      `2 of 3 runs did not complete; the first: run ${ids[0]} failed: exit code 5`,
      `run ${ids[0]} failed: exit code 5`,
      `run ${ids[1]} completed`,
      `run ${ids[2]} failed: exit code 7`,
    ].sort());
    expect(reversed.exitCode).toBe(7);
    const records = JSON.parse(reversed.stdout) as RunRecord[];
    expect(records.map((run) => [run.id, run.status, run.exitCode])).toEqual([
      [ids[2], 'failed', 7], [ids[1], 'completed', 0], [ids[0], 'failed', 5],
    ]);
    // Selected runs go in staging order; --quiet names only those that did not complete.
    expect(byLabel.exitCode).toBe(5);
    expect(byLabel.stderr).not.toContain('completed\n');
    expect(many.exitCode, many.stderr).toBe(0);
    expect(many.stderr).toBe('');
    expect((JSON.parse(many.stdout) as RunRecord[]).map((run) => run.id)).toEqual(done);
  });

  it('refuses an unknown run (exit 2) and says a selection matches nothing (exit 1), waiting for nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    const [unknown, label, array, none, timeout] = await Promise.all([
      fitq(['wait', id, 'nosuchrun'], { queue }),
      fitq(['wait', '--label', 'sweep=none'], { queue }),
      fitq(['wait', '--array', 'x1'], { queue }),
      fitq(['wait'], { queue }),
      fitq(['wait', id, '--timeout', 'soon'], { queue }),
    ]);
    expect(unknown).toEqual({ exitCode: 2, stdout: '', stderr: "Error: unknown run 'nosuchrun'" });
    expect(label).toEqual({ exitCode: 1, stdout: '', stderr: 'No runs match --label sweep=none: nothing to wait for.' });
    expect(array).toEqual({ exitCode: 2, stdout: '', stderr: "Error: unknown array 'x1' (no run of the namespace is part of it)" });
    expect(none).toMatchObject({ exitCode: 2, stderr: 'Error: name the runs to wait for, or select them with --status, --label, --array, --user or --mine' });
    expect(timeout).toMatchObject({ exitCode: 2, stderr: expect.stringContaining("got 'soon'") as unknown });
  });

  it('--timeout gives up with exit 75, naming the runs that had not ended (--json: as they are)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [run] = (await client.stage({ command: ['true'], resources: 'foo=1', array: { indices: [0] } })).runs;
    const staged = run!.id;
    const started = performance.now();
    const result = await fitq(['wait', '--array', run!.array!, '--timeout', '1s', '--json'], { queue });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
    expect(result.exitCode).toBe(75);
    expect(result.stderr).toBe(`Error: gave up waiting after 1 s: 1 of 1 run had not ended: ${staged}`);
    expect((JSON.parse(result.stdout) as RunRecord[]).map((run) => [run.id, run.status])).toEqual([[staged, 'staged']]);
  });

  it('ends with lost, exit 1 and the reason, once the lease of a worker killed with SIGKILL runs out: the waiter reaps it itself', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-wait-'));
    tempDirs.push(dir);
    const pidFile = join(dir, 'pid');
    const id = (await client.stage({ command: ['sh', '-c', `echo $$ > '${pidFile}'; sleep 30`], resources: 'foo=1' })).runs[0]!.id;
    const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const pid = await waitFor('the run to start', () => {
      try {
        return Number(readFileSync(pidFile, 'utf8').trim()) || undefined;
      } catch {
        return undefined;
      }
    });
    runGroups.push(rememberGroup(pid));
    const waiter = spawnFitq(queue, ['wait', id]);
    // Waiting has begun once it holds a blocked read on the event stream.
    await waitFor('the waiter to block', async () => /cmd=xread/.test(await client.redis.client('LIST') as string));
    victim.process.kill('SIGKILL');
    const result = await waiter.child;
    expect(result.exitCode, waiter.stderr()).toBe(1);
    expect(waiter.stderr().trim()).toBe(`run ${id} lost: worker victim stopped renewing its lease`);
  });
});

describe('fitq stage --wait', () => {
  it('--follow prints the run’s output, the id on stderr, and exits with the run’s code', async () => {
    const queue = newQueue();
    await spawnCliWorker(queue, ['-r', 'cpu=1']).waitForMessage(/^Worker resources/);
    const result = await fitq(['stage', '--follow', '--', 'sh', '-c', 'echo one; echo two >&2; sleep 0.2; echo three; exit 4'], { queue });
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe('one\nthree');
    const [staged, ...rest] = result.stderr.split('\n');
    const id = /^Staged run (\S+)$/.exec(staged!)?.[1];
    expect(id).toBeDefined();
    expect(rest).toEqual(['two', `run ${id} failed: exit code 4`]);
  });

  it('--wait prints the ids, waits for every run and exits by the rule; --follow with several runs is refused before staging', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await spawnCliWorker(queue, ['-r', 'cpu=2']).waitForMessage(/^Worker resources/);
    const result = await fitq(['stage', '--wait', '--repeat', '2', '--', 'true'], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    const ids = result.stdout.split('\n');
    expect(ids).toHaveLength(2);
    expect(result.stderr.split('\n').sort()).toEqual(ids.map((id) => `run ${id} completed`).sort());
    const json = await fitq(['stage', '--wait', '--json', '--', 'sh', '-c', 'exit 9'], { queue });
    expect(json.exitCode).toBe(9);
    expect((JSON.parse(json.stdout) as RunRecord[]).map((run) => run.status)).toEqual(['failed']);
    const refused = await fitq(['stage', '--follow', '--repeat', '2', '--', 'true'], { queue });
    expect(refused).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: "Error: --follow prints one run's output, but 2 runs would be staged: use --wait, then fitq logs",
    });
    expect(await client.listRuns()).toHaveLength(3);
  });
});
