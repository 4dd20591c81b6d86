/**
 * The dashboard's runs data against a real Redis and real workers: the WHY
 * cell is the text `fitq runs` prints (a run waiting on a busy resource, one
 * waiting on a dependency), each filter selects what it says, bad filters
 * are refused quoting the value, and the run page's data holds the
 * dependencies with their states, the attempts of a restarted run, and the
 * tail of its output. The actions report what the CLI reports.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { loadRunDetail } from '../../src/dashboard/run-detail.js';
import { listRunRows, MAX_ROWS, parseRunQuery, type RunListing, type RunQuery } from '../../src/dashboard/run-list.js';
import { runAction, workerAction } from '../../src/dashboard/run-actions.js';
import type { FitqClient } from '../../src/client.js';
import { cliWhy, connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';


async function statusOf(client: FitqClient, id: string): Promise<string> {
  return (await client.getRun(id)).status;
}

const query = (text: string): RunQuery => parseRunQuery(new URLSearchParams(text));
const ids = async (client: FitqClient, text: string): Promise<string[]> => (await listRunRows(client, query(text))).rows.map((row) => row.run.id);

describe('dashboard runs data', () => {
  it("gives the WHY text of fitq runs for a run waiting on a busy resource and one waiting on a dependency", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'busy-w', resources: 'slot=1' });
    const { runs: [busy] } = await client.stage({ command: ['sleep', '30'], resources: 'slot=1', runId: 'busy' });
    await waitFor('the first run to start', async () => (await statusOf(client, busy!.id)) === 'running');
    const { runs: [waiting] } = await client.stage({ command: ['true'], resources: 'slot=1', runId: 'waits-slot' });
    const { runs: [dependent] } = await client.stage({ command: ['true'], resources: 'slot=1', runId: 'waits-dep', after: [{ kind: 'ok', ids: [waiting!.id] }] });

    const rows = new Map((await listRunRows(client, query(''))).rows.map((row) => [row.run.id, row.cells.why]));
    const cli = await cliWhy(queue);
    expect(rows.get(waiting!.id)).toBe('next in line on busy-w: waiting for slot=1 > 0 free');
    expect(rows.get(dependent!.id)).toBe(`waiting for dependency ${waiting!.id} (staged)`);
    for (const id of [busy!.id, waiting!.id, dependent!.id]) expect(rows.get(id), `why of ${id}`).toBe(cli.get(id));
  });

  it('filters by status, label, array, worker, user and text', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const alice = await connectClient(queue, undefined, { user: 'alice' });
    await startTestWorker(queue, { name: 'filter-w', resources: 'slot=1' });
    const { runs: [running] } = await client.stage({ command: ['sleep', '30'], resources: 'slot=1', runId: 'run-a', labels: { team: 'red' } });
    await waitFor('the run to start', async () => (await statusOf(client, running!.id)) === 'running');
    await client.stage({ command: ['python', 'train.py', '--lr', '0.1'], resources: 'slot=1', runId: 'run-b', labels: { team: 'blue', sweep: 'lr' } });
    await alice.stage({ command: ['echo', 'hello world'], resources: 'slot=1', runId: 'run-c', labels: { team: 'blue' }, hold: true });
    const { runs: array } = await client.stage({ command: ['echo', '{i}'], resources: 'slot=1', array: { params: [{ i: '1' }, { i: '2' }] } });
    const arrayId = array[0]!.array!;

    expect(await ids(client, 'status=held')).toEqual(['run-c']);
    expect(await ids(client, 'status=running&status=held')).toEqual(['run-a', 'run-c']);
    expect(await ids(client, 'status=running,held')).toEqual(['run-a', 'run-c']);
    expect(await ids(client, 'label=team%3Dblue')).toEqual(['run-b', 'run-c']);
    expect(await ids(client, 'label=team%3Dblue&label=sweep%3Dlr')).toEqual(['run-b']);
    expect(await ids(client, `array=${arrayId.slice(0, 6)}`)).toEqual(array.map((run) => run.id));
    expect(await ids(client, 'worker=filter-w')).toEqual(['run-a']);
    expect(await ids(client, 'user=alice')).toEqual(['run-c']);
    expect((await listRunRows(client, query('user=alice'))).rows[0]!.cells.user).toBe('alice');
    expect(await ids(client, 'q=TRAIN.py')).toEqual(['run-b']);
    expect(await ids(client, 'q=sweep%3Dlr')).toEqual(['run-b']);
    expect(await ids(client, 'q=run-c')).toEqual(['run-c']);
    expect(await ids(client, 'q=hello+world')).toEqual(['run-c']);
    expect(await ids(client, 'q=blue&status=staged')).toEqual(['run-b']);
    // An empty field of the form is no condition (the array is one row, where its first run stands, unless expanded).
    expect(await ids(client, 'status=&label=&array=&worker=&user=&q=&expand=')).toEqual(['run-a', 'run-b', 'run-c', array[0]!.id]);
    expect(await ids(client, 'status=&label=&array=&worker=&q=&expand=1')).toHaveLength(5);
    await expect(ids(client, 'array=nosucharray')).rejects.toThrow("unknown array 'nosucharray'");
  });

  it('lists the newest MAX_ROWS runs, counts those before and after it when nothing is selected, and pages through them', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'slot=1', repeat: MAX_ROWS + 5 });
    const all = runs.map((run) => run.id);
    const around = (listing: RunListing) => [listing.total, listing.older, listing.newer, listing.hasOlder, listing.hasNewer];
    const listing = await listRunRows(client, query(''));
    expect(around(listing)).toEqual([MAX_ROWS + 5, 5, 0, true, false]);
    expect(listing.rows.map((row) => row.run.id)).toEqual(all.slice(5));
    const seqOf = (index: number) => listing.rows[index - 5]!.run.seq;

    const older = await listRunRows(client, query(`before=${seqOf(5)}`));
    expect(around(older)).toEqual([MAX_ROWS + 5, 0, MAX_ROWS, false, true]);
    expect(older.rows.map((row) => row.run.id)).toEqual(all.slice(0, 5));
    const after = await listRunRows(client, query(`after=${older.rows[2]!.run.seq}`));
    expect([after.older, after.newer]).toEqual([3, 2]);
    expect(after.rows.map((row) => row.run.id)).toEqual(all.slice(3, 3 + MAX_ROWS));
    const past = await listRunRows(client, query(`after=${seqOf(MAX_ROWS + 4)}`));
    expect([past.rows.length, past.older, past.newer]).toEqual([0, MAX_ROWS + 5, 0]);
  });

  it('with runs selected, pages the same without counting them: it says whether more may match before and after the page', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'slot=1', repeat: MAX_ROWS + 5 });
    const all = runs.map((run) => run.id);
    const around = (listing: RunListing) => [listing.total, listing.older, listing.newer, listing.hasOlder, listing.hasNewer];
    const newest = await listRunRows(client, query('status=staged'));
    expect(around(newest)).toEqual([undefined, undefined, undefined, true, false]);
    expect(newest.rows.map((row) => row.run.id)).toEqual(all.slice(5));
    const older = await listRunRows(client, query(`status=staged&before=${newest.first}`));
    expect(around(older)).toEqual([undefined, undefined, undefined, false, true]);
    expect(older.rows.map((row) => row.run.id)).toEqual(all.slice(0, 5));
    const after = await listRunRows(client, query(`status=staged&after=${older.last}`));
    expect(after.rows.map((row) => row.run.id)).toEqual(all.slice(5));
    expect([after.hasOlder, after.hasNewer]).toEqual([true, false]);
  });

  it('refuses bad filters, quoting them', () => {
    expect(() => query('status=runing')).toThrow(new UsageError("unknown status 'runing': choose from staged, held, running, completed, failed, canceled, lost, rejected, timeout"));
    expect(() => query('label=team')).toThrow("invalid label 'team': expected KEY=VALUE");
    expect(() => query('colour=red')).toThrow("unknown filter 'colour'");
    expect(() => query('worker=a%20b')).toThrow("invalid worker name 'a b'");
    expect(() => query('user=%3Cb%3E')).toThrow("invalid user '<b>'");
    expect(() => query('array=%3Cscript%3E')).toThrow("invalid run id '<script>'");
    expect(() => query('before=0')).toThrow("invalid page position before='0': expected a run's staging number (1 or more)");
    expect(() => query('after=1e3')).toThrow("invalid page position after='1e3': expected a run's staging number (0 or more)");
    expect(() => query('before=3&after=1')).toThrow('give before or after, not both');
  });

  it("gives a run's dependencies with their states, its attempts after a restart, and its output's tail", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'detail-w', resources: 'slot=1' });
    const { runs: [flaky] } = await client.stage({ command: ['sh', '-c', 'for i in $(seq 1 300); do echo line $i; done; exit 3'], resources: 'slot=1', runId: 'flaky' });
    const { runs: [next] } = await client.stage({
      command: ['true'],
      resources: 'slot=1',
      runId: 'next',
      after: [{ kind: 'notok', ids: [flaky!.id] }],
    });
    await client.waitForRuns([flaky!.id, next!.id], { timeoutMs: 30_000 });
    expect(await restarted(client, flaky!.id)).toEqual(['Run flaky restarted: staged']);
    await client.waitForRuns([flaky!.id], { timeoutMs: 30_000 });
    await worker.stop();

    const detail = await loadRunDetail(client, 'fla');
    expect(detail.run.id).toBe('flaky');
    expect(detail.dependents).toEqual([{ id: 'next', status: 'completed' }]);
    expect(detail.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.exitCode, attempt.worker])).toEqual([
      [1, 'failed', 3, 'detail-w'],
      [2, 'failed', 3, 'detail-w'],
    ]);
    // The second attempt's output, its last 200 lines.
    expect(detail.tail.map((entry) => (entry.kind === 'line' ? entry.line : entry.reason))).toEqual(Array.from({ length: 200 }, (_, i) => `line ${i + 101}`));
    expect(detail.earlierLines).toBeGreaterThanOrEqual(100);

    const waiter = await loadRunDetail(client, 'next');
    expect(waiter.dependencies).toEqual([{ kind: 'notok', runs: [{ id: 'flaky', status: 'failed' }] }]);
    await client.removeRuns(['flaky']);
    expect((await loadRunDetail(client, 'next')).dependencies).toEqual([{ kind: 'notok', runs: [{ id: 'flaky', status: 'removed' }] }]);
    await expect(loadRunDetail(client, 'nosuchrun')).rejects.toThrow("unknown run 'nosuchrun'");
  });

  it('acts through the client and says what the CLI says', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'slot=1', runId: 'a1' });
    expect(await runAction(client, 'hold', 'a1')).toEqual({ ok: true, lines: ['Run a1 held (fitq release a1 to let it start)'] });
    expect(await statusOf(client, 'a1')).toBe('held');
    expect((await runAction(client, 'release', 'a1')).lines[0]).toMatch(/^Run a1 released: /);
    expect(await runAction(client, 'priority', 'a1', '7')).toEqual({ ok: true, lines: ['Run a1 updated: priority 0 -> 7'] });
    expect((await client.getRun('a1')).priority).toBe(7);
    expect(await runAction(client, 'priority', 'a1', '7.5')).toEqual({ ok: false, lines: ["expected priority to be an integer from -1000000 to 1000000, got '7.5'"] });
    expect(await runAction(client, 'restart', 'a1')).toEqual({ ok: false, lines: ['Run a1 is staged: only an ended run can be restarted'] });
    expect(await runAction(client, 'cancel', 'a1')).toEqual({ ok: true, lines: ['Run a1 canceled'] });
    expect(await statusOf(client, 'a1')).toBe('canceled');

    await startTestWorker(queue, { name: 'drain-w', resources: 'slot=1' });
    expect(await workerAction(client, 'drain', 'drain-w')).toEqual({ ok: true, lines: ['Worker drain-w drained: it runs nothing and claims nothing more'] });
    expect((await fitq(['workers'], { queue })).stdout).toMatch(/drain-w\s+drained/);
    expect(await workerAction(client, 'undrain', 'drain-w')).toEqual({ ok: true, lines: ['Worker drain-w undrained: it claims runs again'] });
    expect(await workerAction(client, 'drain', 'nobody')).toEqual({ ok: false, lines: ["unknown worker 'nobody' (no live worker has that name)"] });
  });
});

async function restarted(client: FitqClient, id: string): Promise<string[]> {
  const outcome = await runAction(client, 'restart', id);
  expect(outcome.ok).toBe(true);
  return outcome.lines;
}
