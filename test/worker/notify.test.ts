/**
 * Notifications through a real worker and a real HTTP server (node:http):
 * the run's own --notify URL, the namespace's (fitq notify set/rm), retries
 * after failed tries, the payload (never the environment), and a stopping
 * worker that never waits long for a receiver that does not answer.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { startReceiver } from '../support/http-receiver.js';
import { waitFor } from '../support/wait.js';

describe('notifications', () => {
  it('POSTs the ended run’s record to its --notify URL, trying again after failures; never its environment', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { url, received } = await startReceiver((n) => (n <= 2 ? 500 : 200));
    const staged = await fitq(['stage', '--notify', `${url}/hook?token=s3cret`, '--label', 'sweep=a', '--env', 'API_KEY=hidden', '--', 'sh', '-c', 'exit 3'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout;
    // (Not --run-once: a stopping worker would give the later tries up.)
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1']);
    expect(await client.waitForRuns([id])).toMatchObject([{ status: 'failed', exitCode: 3 }]);
    await waitFor('the third try to arrive', () => received.length === 3);
    expect(received.map((post) => post.path)).toEqual(Array(3).fill('/hook?token=s3cret'));
    const run = await client.getRun(id);
    expect(received[2]).toEqual({
      path: '/hook?token=s3cret',
      contentType: 'application/json',
      body: {
        event: 'run.ended', queue, id, status: 'failed', exitCode: 3, signal: null, reason: 'exit code 3', worker: run.worker,
        stagedAt: run.stagedAt, startedAt: run.startedAt, endedAt: run.endedAt, labels: { sweep: 'a' },
        command: ['sh', '-c', 'exit 3'], shell: false, requires: '',
      },
    });
    expect(JSON.stringify(received)).not.toContain('hidden');
    // Each failure logged, with the URL's origin only.
    expect(worker.messages().filter((message) => message.startsWith('Could not notify'))).toEqual([
      `Could not notify ${url} of run ${id} (HTTP 500); trying again in 1 s`,
      `Could not notify ${url} of run ${id} (HTTP 500); trying again in 2 s`,
    ]);
  });

  it('uses the namespace’s URL (fitq notify set), which a running worker picks up at once, and stops after fitq notify rm', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { url, received } = await startReceiver(() => 204);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--concurrency', '1']);
    await worker.waitForMessage(/^Worker resources/);
    expect(await fitq(['notify'], { queue })).toEqual({ exitCode: 0, stdout: 'No notification URL (fitq notify set URL)', stderr: '' });
    expect(await fitq(['notify', 'set', `${url}/default`], { queue })).toMatchObject({ exitCode: 0, stdout: `Runs that end now notify ${url}/default` });
    expect(await fitq(['notify', '--json'], { queue })).toMatchObject({ exitCode: 0, stdout: JSON.stringify({ url: `${url}/default` }) });
    // The worker reads it again as the `notify` event comes, ahead of the `staged` one on the same channel.
    const first = (await client.stage({ command: ['true'] })).runs[0]!.id;
    await client.waitForRuns([first]);
    await waitFor('the notification', () => received.length === 1);
    expect(received[0]).toMatchObject({ path: '/default', body: { id: first, status: 'completed', exitCode: 0 } });

    expect(await fitq(['notify', 'rm', '--json'], { queue })).toMatchObject({ exitCode: 0, stdout: JSON.stringify({ url: null, changed: true }) });
    expect(await fitq(['notify', 'rm'], { queue })).toMatchObject({ exitCode: 0, stdout: 'No notification URL was set' });
    // In staging order on one slot: the first ends (and would notify) before the second, whose own URL is notified.
    const [silent, own] = (await client.stage([{ command: ['true'] }, { command: ['true'], notify: `${url}/own` }])).runs.map((run) => run.id);
    await client.waitForRuns([silent!, own!]);
    await waitFor('the run’s own notification', () => received.length === 2);
    expect(received[1]).toMatchObject({ path: '/own', body: { id: own } });
    expect(received.map((post) => post.body.id)).not.toContain(silent);
  });

  it('runs that end without their worker are notified too, once each: canceled while staged, lost with a worker killed -9', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { url, received } = await startReceiver(() => 200);
    expect((await fitq(['notify', 'set', url], { queue })).exitCode).toBe(0);
    const [staged, lost] = (await client.stage([{ command: ['true'], resources: 'gpu=1' }, { command: ['sleep', '60'], resources: 'cpu=1' }])).runs.map((run) => run.id);
    const doomed = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'doomed', '--lease', '2']);
    await waitFor('the run to start', async () => (await client.getRun(lost!)).status === 'running');
    doomed.process.kill('SIGKILL');
    await doomed.exited;
    await client.cancelRun(staged!);
    // Another worker sends them: the lost run once its lease is out (the waiter reaps it).
    spawnCliWorker(queue, ['-r', 'mem=1', '--name', 'sender']);
    expect((await client.waitForRuns([lost!])).map((run) => run.status)).toEqual(['lost']);
    await waitFor('both notifications', () => received.length === 2);
    expect(received.map((post) => [post.body.id, post.body.status]).sort()).toEqual([[lost, 'lost'], [staged, 'canceled']].sort());
    expect(await client.redis.llen(client.keys.notifyOutbox)).toBe(0);
  });

  it('refuses a URL that is not http(s), quoting it, staging nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [stage, set] = await Promise.all([
      fitq(['stage', '--notify', 'ftp://example.com/x', '--', 'true'], { queue }),
      fitq(['notify', 'set', 'not a url'], { queue }),
    ]);
    expect(stage).toEqual({ exitCode: 2, stdout: '', stderr: "Error: invalid --notify 'ftp://example.com/x': expected an http:// or https:// URL" });
    expect(set).toEqual({ exitCode: 2, stdout: '', stderr: "Error: invalid URL 'not a url': expected an http:// or https:// URL" });
    expect(await client.listRuns()).toEqual([]);
    expect(await client.getNotifyUrl()).toBeUndefined();
  });

  it('refuses a URL with a user name or password, quoting it with them masked, staging nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [stage, set] = await Promise.all([
      fitq(['stage', '--notify', 'https://ops:s3cret@hooks.example.com/fitq', '--', 'true'], { queue }),
      fitq(['notify', 'set', 'https://s3cret@hooks.example.com/fitq?x=1'], { queue }),
    ]);
    const why = "a URL with a user name or password is refused (workers cannot send one); put the receiver's token in its path or query";
    expect(stage).toEqual({ exitCode: 2, stdout: '', stderr: `Error: invalid --notify 'https://***@hooks.example.com/fitq': ${why}` });
    expect(set).toEqual({ exitCode: 2, stdout: '', stderr: `Error: invalid URL 'https://***@hooks.example.com/fitq?x=1': ${why}` });
    expect(await client.listRuns()).toEqual([]);
    expect(await client.getNotifyUrl()).toBeUndefined();
  });

  it('never holds a stopping worker long: a receiver that does not answer is given up after a short while', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { url, received } = await startReceiver(() => undefined);
    const id = (await client.stage({ command: ['true'], notify: url })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--run-once']);
    await client.waitForRuns([id]);
    await waitFor('the POST to arrive', () => received.length === 1);
    const exited = await worker.exited;
    expect(exited.exitCode).toBe(0);
    expect(worker.messages()).toContain('Gave up 1 notification(s) still on their way: the worker is stopping');
  });
});
