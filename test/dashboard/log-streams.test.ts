/**
 * The run pages' output streams (`/runs/NS/ID/log`) and the live stream
 * (`/events`) of the real `fitq dashboard` process: however many are open,
 * Redis sees one reader per namespace for all followed logs (its client
 * count stays flat, and other fitq commands keep working under a low
 * `maxclients`); and one client, or all of them, can open only so many
 * streams at once, the next refused in plain words (429, 503).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_STREAMS, MAX_STREAMS_PER_CLIENT } from '../../src/dashboard/stream-slots.js';
import { openBrowserPage, startDashboard } from '../support/browser.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { openRawEventStream, type RawEventStream } from '../support/raw-http.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const opened: RawEventStream[] = [];
let server: RedisServer | undefined;
afterEach(async () => {
  opened.splice(0).forEach((stream) => stream.close());
  await server?.dispose();
  server = undefined;
});

async function open(origin: string, path: string, localAddress: string): Promise<RawEventStream> {
  const stream = await openRawEventStream(origin, path, { localAddress });
  opened.push(stream);
  return stream;
}

describe('fitq dashboard: output streams', () => {
  it('follows every open log over one Redis connection per namespace: 60 streams, Redis clients flat, fitq runs still served under maxclients 40', async () => {
    server = await startRedisServer({ config: { maxclients: '40' } });
    const queue = newQueue();
    const client = await connectClient(queue, server.url);
    const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 6 });
    const ids = runs.map((run) => run.id);
    const dashboard = await startDashboard(queue, [], { FITQ_REDIS_URL: server.url });
    const clientCount = async () => String(await client.redis.client('LIST')).trim().split('\n').length;
    const before = await clientCount();

    // Ten pages on each of six runs, from six clients (127.0.0.2-7) of this machine.
    const streams: { id: string; stream: RawEventStream }[] = [];
    for (let i = 0; i < 60; i++) {
      const id = ids[i % ids.length]!;
      const stream = await open(dashboard.origin, `/runs/${queue}/${id}/log?after=0`, `127.0.0.${2 + (i % 6)}`);
      expect(stream.status, stream.refusal).toBe(200);
      streams.push({ id, stream });
    }
    // A line in each run's log, appended as a worker appends it: every stream hears its run's.
    for (const id of ids) await client.redis.xadd(client.keys.runLog(id), '*', 'stream', 'stdout', 'line', `hello from ${id}`);
    for (const { id, stream } of streams) await stream.until(new RegExp(`event: line\\n.*hello from ${id}`));

    expect(await clientCount()).toBeLessThanOrEqual(before + 1);
    const listed = await fitq(['runs'], { queue, env: { FITQ_REDIS_URL: server.url } });
    expect(listed.exitCode, listed.stderr).toBe(0);

    // A run's end reaches each of its streams, which then end; the others follow on.
    await client.cancelRuns([ids[0]!]);
    for (const { id, stream } of streams.filter((entry) => entry.id === ids[0])) {
      expect(await stream.until(/event: end\n/), id).toMatch(/"status":"canceled"/);
    }
    await client.redis.xadd(client.keys.runLog(ids[1]!), '*', 'stream', 'stderr', 'line', 'second line');
    for (const { stream } of streams.filter((entry) => entry.id === ids[1])) await stream.until(/second line/);
    expect(await clientCount()).toBeLessThanOrEqual(before + 1);
    expect(dashboard.stderr()).toBe('');
  });

  it('follows on across a Redis restart: a line appended once Redis is back reaches the open stream', async () => {
    server = await startRedisServer({ appendonly: true });
    const queue = newQueue();
    const before = await connectClient(queue, server.url);
    const { runs } = await before.stage({ command: ['true'], resources: 'nowhere=1' });
    const id = runs[0]!.id;
    const dashboard = await startDashboard(queue, [], { FITQ_REDIS_URL: server.url });
    const stream = await open(dashboard.origin, `/runs/${queue}/${id}/log`, '127.0.0.2');
    await before.redis.xadd(before.keys.runLog(id), '*', 'stream', 'stdout', 'line', 'before the restart');
    await stream.until(/before the restart/);
    await before.close();

    await server.stop();
    await server.start();
    const after = await connectClient(queue, server.url);
    await after.redis.xadd(after.keys.runLog(id), '*', 'stream', 'stdout', 'line', 'after the restart');
    const text = await stream.until(/after the restart/);
    expect(text.match(/before the restart/g)).toHaveLength(1);
  });

  it('ends a followed run whose worker was killed as lost once its lease runs out, with no other worker or command to notice', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['sh', '-c', 'echo started; sleep 60'], resources: 'foo=1' });
    const id = runs[0]!.id;
    const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const dashboard = await startDashboard(queue);
    const stream = await open(dashboard.origin, `/runs/${queue}/${id}/log`, '127.0.0.2');
    await stream.until(/event: line\n.*started/);
    victim.process.kill('SIGKILL');
    await victim.exited;
    expect(await stream.until(/event: end\n.*\n/)).toMatch(new RegExp(`"status":"lost","text":"run ${id} lost: worker victim stopped renewing its lease"`));
    expect((await client.getRun(id)).status).toBe('lost');
  });

  it('takes at most MAX_STREAMS_PER_CLIENT streams from one client (429) and MAX_STREAMS in all (503); a closed one frees its place', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1' });
    const dashboard = await startDashboard(queue);
    const log = `/runs/${queue}/${runs[0]!.id}/log`;

    const first: RawEventStream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_CLIENT; i++) {
      const stream = await open(dashboard.origin, i % 2 === 0 ? '/events' : log, '127.0.0.2');
      expect(stream.status, stream.refusal).toBe(200);
      first.push(stream);
    }
    await first[0]!.until(/event: hello/);
    for (const path of ['/events', log]) {
      const refused = await open(dashboard.origin, path, '127.0.0.2');
      expect(refused.status, path).toBe(429);
      expect(refused.refusal).toBe(`too many streams from 127.0.0.2: at most ${MAX_STREAMS_PER_CLIENT} at once per client (event streams and run output; close a page)\n`);
    }
    // Another client is served meanwhile; and once one of the first client's streams closes, it may open another.
    expect((await open(dashboard.origin, '/events', '127.0.0.3')).status).toBe(200);
    first[0]!.close();
    await waitFor('a place freed by the closed stream', async () => {
      const again = await open(dashboard.origin, '/events', '127.0.0.2');
      if (again.status === 200) return true;
      expect(again.status).toBe(429);
      return false;
    });

    // Up to MAX_STREAMS in all, from as many clients as it takes; the next one is refused whoever asks.
    let total = MAX_STREAMS_PER_CLIENT + 1;
    for (let host = 4; total < MAX_STREAMS; host++) {
      for (let i = 0; i < MAX_STREAMS_PER_CLIENT && total < MAX_STREAMS; i++, total++) {
        const stream = await open(dashboard.origin, '/events', `127.0.0.${host}`);
        expect(stream.status, stream.refusal).toBe(200);
      }
    }
    const full = await open(dashboard.origin, log, '127.0.0.200');
    expect(full.status).toBe(503);
    expect(full.refusal).toBe(`the dashboard has ${MAX_STREAMS} streams open, as many as it serves at once (event streams and run output): try again later\n`);
    // Pages and everything else are still served.
    expect((await fetch(`${dashboard.origin}/runs`)).status).toBe(200);
  });

  it('in Chromium, a page whose streams are refused says so (header and output), instead of following or reconnecting', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1' });
    const dashboard = await startDashboard(queue);
    // This machine's browser is 127.0.0.1: its place is taken.
    for (let i = 0; i < MAX_STREAMS_PER_CLIENT; i++) expect((await open(dashboard.origin, '/events', '127.0.0.1')).status).toBe(200);
    const { page, consoleErrors } = await openBrowserPage(dashboard.origin);
    await page.goto(`${dashboard.origin}/runs/${queue}/${runs[0]!.id}`);
    await page.locator('[data-testid="live-status"][data-state="refused"]').waitFor();
    expect(await page.getByTestId('live-status').textContent()).toBe('not live: stream refused (reload to try again)');
    await page.locator('[data-testid="log-state"][data-state="error"]').waitFor();
    expect(await page.getByTestId('log-state').textContent()).toBe('not following: stream refused (reload to try again)');
    // The browser's own note of the refusals, and nothing else.
    expect(consoleErrors).toEqual(Array(2).fill('Failed to load resource: the server responded with a status of 429 (Too Many Requests)'));
  });
});
