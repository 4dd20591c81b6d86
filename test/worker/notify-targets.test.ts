/**
 * Where notifications may go, as someone who can write to Redis would try
 * to send them elsewhere: real `fitq worker` processes, real runs and real
 * HTTP receivers (one redirecting to another that records). A rejected run
 * never notifies, redirects are not followed, `--notify-allow` limits the
 * targets (a worker with a secret notifies nowhere without it), and a URL
 * with credentials is refused and never logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alterRunData, connectClient, fitq, newQueue } from '../support/fitq.js';
import { spawnCliWorker, type CliWorker } from '../support/cli-worker.js';
import { startReceiver } from '../support/http-receiver.js';
import { waitFor } from '../support/wait.js';

function secretFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fitq-notify-')), 'secret');
  writeFileSync(path, `fitq-test-secret-${randomBytes(12).toString('hex')}\n`, { mode: 0o600 });
  return path;
}

/** Stops a CLI worker gracefully (it waits a while for notifications on their way) and waits for it to exit. */
async function stopWorker(worker: CliWorker): Promise<void> {
  worker.process.kill('SIGTERM');
  expect((await worker.exited).exitCode).toBe(0);
}

/** The worker's log lines about notifying run `id`. */
function aboutRun(worker: CliWorker, id: string): string[] {
  return worker.messages().filter((message) => /notif/i.test(message) && message.includes(id));
}

describe('notification targets', () => {
  it('a rejected run never notifies; a signed run on the same worker does (--secret-file with --notify-allow)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const secret = secretFile();
    const receiver = await startReceiver(() => 200);
    // Unsigned, as anyone who can write to Redis could stage it: rejected on a worker with a secret.
    const unsigned = (await client.stage({ command: ['true'], notify: `${receiver.url}/internal-admin/drop`, labels: { table: 'users' } })).runs[0]!.id;
    const signed = await fitq(['stage', '--secret-file', secret, '--notify', `${receiver.url}/ok`, '--', 'true'], { queue });
    expect(signed.exitCode, signed.stderr).toBe(0);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--concurrency', '1', '--secret-file', secret, '--notify-allow', receiver.url]);
    expect((await client.waitForRuns([unsigned, signed.stdout])).map((run) => run.status)).toEqual(['rejected', 'completed']);
    await waitFor('the signed run’s notification', () => receiver.received.length > 0);
    // A stopping worker sends what is on its way first: nothing more can arrive after it exited.
    await stopWorker(worker);
    expect(receiver.received.map((post) => [post.path, post.body.id])).toEqual([['/ok', signed.stdout]]);
    expect(aboutRun(worker, unsigned)).toEqual([]);
  });

  it('does not follow a redirect: a 307 ends the notification, logged once, and its target hears nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const target = await startReceiver(() => 200);
    const redirector = await startReceiver(() => ({ status: 307, headers: { location: `${target.url}/internal-admin/drop` } }));
    const id = (await client.stage({ command: ['true'], notify: `${redirector.url}/hook` })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1']);
    await client.waitForRuns([id]);
    await waitFor('the notification to be done with', () => aboutRun(worker, id).length > 0 || target.received.length > 0);
    expect(target.received).toEqual([]);
    expect(redirector.received.map((post) => post.path)).toEqual(['/hook']);
    expect(aboutRun(worker, id)).toEqual([`Could not notify ${redirector.url} of run ${id} (HTTP 307: redirects are not followed); not tried again`]);
  });

  it('--notify-allow: only URLs under an allowed one (scheme, host, port, then path segments), for runs that ended with their worker or without', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const receiver = await startReceiver(() => 200);
    const other = await startReceiver(() => 200);
    const port = new URL(receiver.url).port;
    const urls = [
      `${receiver.url}/hooks/a?token=1`,
      `${receiver.url}/hooks`,
      `${receiver.url}/hooksx`,
      `${receiver.url}/hooks/../internal-admin`,
      `${receiver.url}/hooks/..%2Finternal-admin`,
      `http://localhost:${port}/hooks/a`,
      `https://127.0.0.1:${port}/hooks/a`,
      `${other.url}/hooks/a`,
    ];
    const ids = (await client.stage(urls.map((notify) => ({ command: ['true'], notify })))).runs.map((run) => run.id);
    // Canceled while staged: its notification waits in the outbox for a worker.
    const canceled = (await client.stage({ command: ['true'], resources: 'gpu=1', notify: `${other.url}/hooks/b` })).runs[0]!.id;
    await client.cancelRun(canceled);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--concurrency', '1', '--notify-allow', `${receiver.url}/hooks/`]);
    await client.waitForRuns(ids);
    await waitFor('the two allowed notifications', () => receiver.received.length === 2);
    const refused = [...ids.slice(2), canceled];
    await waitFor('every refusal', () => refused.every((id) => aboutRun(worker, id).length > 0));
    await stopWorker(worker);
    expect(receiver.received.map((post) => post.path).sort()).toEqual(['/hooks', '/hooks/a?token=1']);
    expect(other.received).toEqual([]);
    const origins = [receiver.url, receiver.url, receiver.url, `http://localhost:${port}`, `https://127.0.0.1:${port}`, other.url, other.url];
    expect(refused.map((id) => aboutRun(worker, id))).toEqual(
      refused.map((id, i) => [`Not notifying ${origins[i]} of run ${id}: its URL is not under --notify-allow`]),
    );
  });

  it('a worker with a secret and no --notify-allow notifies nowhere, and says why once', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const secret = secretFile();
    const receiver = await startReceiver(() => 200);
    expect((await fitq(['notify', 'set', `${receiver.url}/all`], { queue })).exitCode).toBe(0);
    const ids: string[] = [];
    for (const extra of [['--notify', `${receiver.url}/own`], []]) {
      const staged = await fitq(['stage', '--secret-file', secret, ...extra, '--', 'true'], { queue });
      expect(staged.exitCode, staged.stderr).toBe(0);
      ids.push(staged.stdout);
    }
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--secret-file', secret]);
    expect((await client.waitForRuns(ids)).map((run) => run.status)).toEqual(['completed', 'completed']);
    await waitFor('the refusal', () => aboutRun(worker, ids[0]!).length > 0 || aboutRun(worker, ids[1]!).length > 0);
    await stopWorker(worker);
    expect(receiver.received).toEqual([]);
    expect(worker.messages().filter((message) => message.startsWith('Not notifying'))).toEqual([
      expect.stringMatching(
        new RegExp(`^Not notifying ${receiver.url} of run (${ids.join('|')}): this worker requires signed runs and notification URLs are not signed; allow receivers with --notify-allow \\(said once\\)$`),
      ),
    ]);
  });

  it('a URL with a user name or password stored in Redis is not sent, and never logged', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const receiver = await startReceiver(() => 200);
    const id = (await client.stage({ command: ['true'], notify: `${receiver.url}/hook` })).runs[0]!.id;
    // As an older fitq, or anyone who can write to Redis, could have stored it.
    await alterRunData(client, id, (data) => (data.notify = receiver.url.replace('//', '//ops:s3cret@') + '/hook'));
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1']);
    await client.waitForRuns([id]);
    await waitFor('the notification to be done with', () => aboutRun(worker, id).length > 0);
    await stopWorker(worker);
    expect(aboutRun(worker, id)).toEqual([`Not notifying ${receiver.url} of run ${id}: its URL holds a user name or password`]);
    expect(worker.stdout() + worker.stderr()).not.toContain('s3cret');
    expect(receiver.received).toEqual([]);
  });

  it('refuses bad --notify-allow values, quoting them (credentials masked), before the worker starts', async () => {
    const queue = newQueue();
    const results = await Promise.all(
      ['ftp://hooks.example.com', 'https://ops:s3cret@hooks.example.com', 'https://hooks.example.com/fitq?token=1', 'hooks.example.com'].map((value) =>
        fitq(['worker', '-r', 'cpu=1', '--notify-allow', value], { queue }),
      ),
    );
    expect(results).toEqual([
      { exitCode: 2, stdout: '', stderr: "Error: invalid --notify-allow 'ftp://hooks.example.com': expected an http:// or https:// URL" },
      {
        exitCode: 2,
        stdout: '',
        stderr: "Error: invalid --notify-allow 'https://***@hooks.example.com': a URL with a user name or password is refused (workers cannot send one); put the receiver's token in its path or query",
      },
      {
        exitCode: 2,
        stdout: '',
        stderr: "Error: invalid --notify-allow 'https://hooks.example.com/fitq?token=1': a query or fragment is not matched; give the scheme, host, port and path to allow",
      },
      { exitCode: 2, stdout: '', stderr: "Error: invalid --notify-allow 'hooks.example.com': expected an http:// or https:// URL" },
    ]);
  });
});
