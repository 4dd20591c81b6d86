/**
 * fitq's exit codes agree across commands (src/exit-codes.ts, README "Exit
 * codes"): a run that ended canceled or lost gives the same code to `fitq
 * wait` and `fitq logs -f`; a run that has not ended is refused by `fitq
 * restart` as a running run is by `fitq update`; a selection that matches
 * nothing exits the same for every command that selects runs; an
 * interrupted `logs -f` exits as an interrupted `wait`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, fitq, newQueue, spawnFitq, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('exit codes', () => {
  it('a canceled run and a lost run exit the same for fitq wait and fitq logs -f', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const [canceled] = (await client.stage({ command: ['true'], resources: 'nowhere=1' })).runs;
    await client.cancelRun(canceled!.id);
    // A worker that claims a run and dies: once its lease lapses the run ends lost.
    expect(await scripts.registerWorker({ name: 'dead', token: 'tok', leaseMs: 300, concurrency: 0, host: 'h', pid: 1, resources: 'slot=1' })).toBe(true);
    const [lost] = (await client.stage({ command: ['true'], resources: 'slot=1' })).runs;
    expect(await scripts.claimRun('dead', 'tok', 0)).toMatchObject({ code: 'claimed', runId: lost!.id });
    await waitFor('the lease to lapse and the run to be lost', async () => {
      await scripts.reapWorkers();
      return (await client.getRun(lost!.id)).status === 'lost';
    });

    for (const id of [canceled!.id, lost!.id]) {
      const [waited, followed] = await Promise.all([fitq(['wait', id], { queue }), fitq(['logs', '-f', id], { queue })]);
      expect(waited.exitCode, waited.stderr).toBe(EXIT.failed);
      expect(followed.exitCode, followed.stderr).toBe(waited.exitCode);
      expect(followed.stderr).toBe(waited.stderr);
    }
  });

  it('fitq restart refuses a run that has not ended (exit 2, nothing restarted) as fitq update refuses a running one', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker({ name: 'busy', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'slot=1' })).toBe(true);
    const [running] = (await client.stage({ command: ['true'], resources: 'slot=1' })).runs;
    expect(await scripts.claimRun('busy', 'tok', 0)).toMatchObject({ code: 'claimed', runId: running!.id });
    const [ended] = (await client.stage({ command: ['true'], resources: 'slot=1' })).runs;
    await client.cancelRun(ended!.id);

    const updated = await fitq(['update', running!.id, '--priority', '1'], { queue });
    const restarted = await fitq(['restart', ended!.id, running!.id], { queue });
    expect(updated).toMatchObject({ exitCode: EXIT.usage, stdout: '' });
    expect(restarted).toEqual({
      exitCode: EXIT.usage,
      stdout: '',
      stderr: `Error: run '${running!.id}' is running: only an ended run can be restarted`,
    });
    // Every run is checked first: the ended one is not restarted either.
    expect((await client.getRun(ended!.id)).status).toBe('canceled');
  });

  it('a selection that matches nothing exits the same for every command that selects runs, saying so on stderr', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'nowhere=1', labels: { team: 'a' } });
    const commands: [string[], string][] = [
      [['wait', '--label', 'team=none'], '--label team=none: nothing to wait for'],
      [['cancel', '--label', 'team=none'], '--status staged,held,running --label team=none: nothing to cancel'],
      [['cancel', '--label', 'team=none', '--dry-run'], '--status staged,held,running --label team=none: nothing to cancel'],
      [['runs', 'rm', '--label', 'team=none'], '--label team=none: nothing to remove'],
      [['restart', '--status', 'failed'], '--status failed: nothing to restart'],
      [['hold', '--label', 'team=none'], '--status staged --label team=none: nothing to hold'],
      [['release', '--label', 'team=a'], '--status held --label team=a: nothing to release'],
      [['update', '--where-label', 'team=none', '--priority', '1'], '--status staged,held --label team=none: nothing to update'],
    ];
    for (const [args, what] of commands) {
      const result = await fitq(args, { queue });
      expect(result, args.join(' ')).toEqual({ exitCode: EXIT.nothingMatched, stdout: '', stderr: `No runs match ${what}.` });
    }
    // --json: an empty array on stdout, the same exit code.
    expect(await fitq(['cancel', '--label', 'team=none', '--json'], { queue })).toMatchObject({ exitCode: EXIT.nothingMatched, stdout: '[]' });
    expect(await fitq(['wait', '--label', 'team=none', '--json'], { queue })).toMatchObject({ exitCode: EXIT.nothingMatched, stdout: '[]' });
  });

  it('fitq logs -f interrupted (SIGINT) exits as an interrupted fitq wait, saying how to follow again; the run goes on', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [run] = (await client.stage({ command: ['sh', '-c', 'echo started; exec sleep 60'], resources: 'slot=1' })).runs;
    await startTestWorker(queue, { resources: 'slot=1' });
    const following = spawnFitq(queue, ['logs', '-f', run!.id]);
    // Its first line printed: it follows (and hears signals).
    await waitFor('the follower to print the first line', () => following.stdout() === 'started\n');
    following.child.kill('SIGINT');
    const result = await following.child;
    expect([result.exitCode, following.stderr()]).toEqual([EXIT.interrupted, `Interrupted: run ${run!.id} is running (fitq logs -f ${run!.id})\n`]);
    expect((await client.getRun(run!.id)).status).toBe('running');
    await client.cancelRun(run!.id);
  });

  it("README's table of exit codes names every code fitq exits with", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Exit codes'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| ---')));
    const listed = new Set([...table.matchAll(/^\| (\d+)(?: \(|\s\|)/gm)].map((match) => Number(match[1])));
    expect([...listed].sort((a, b) => a - b)).toEqual([...new Set(Object.values(EXIT))].sort((a, b) => a - b));
  });
});
