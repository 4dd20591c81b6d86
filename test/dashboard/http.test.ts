/**
 * The dashboard over plain HTTP, as the real `fitq dashboard` process
 * serves it: the token on every page, fragment, asset and event stream;
 * the loopback rule; hostile commands rendered as text; no env value of a
 * run anywhere.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDashboard } from '../support/browser.js';
import { openEventStream } from '../support/sse.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'tok-3f9a "quoted" & <b>';
const PATHS = ['/', '/workers', '/pools', '/fragments/overview', '/fragments/workers', '/fragments/pools', '/assets/style.css', '/assets/live.js'];

describe('fitq dashboard access', () => {
  it('refuses every page, fragment, asset and the event stream without the token or with a wrong one', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, ['--token', TOKEN]);
    for (const path of [...PATHS, '/events']) {
      const missing = await fetch(`${dashboard.origin}${path}`);
      expect(missing.status, `${path} without a token`).toBe(401);
      expect(await missing.text()).toContain('401: token required');
      expect(missing.headers.get('x-frame-options')).toBe('DENY');
      const wrong = await fetch(`${dashboard.origin}${path}`, { headers: { Authorization: 'Bearer tok-3f9a' } });
      expect(wrong.status, `${path} with a wrong token`).toBe(401);
      const wrongQuery = await fetch(`${dashboard.origin}${path}?token=nope`, { redirect: 'manual' });
      expect(wrongQuery.status, `${path} with a wrong ?token`).toBe(401);
      expect(wrongQuery.headers.get('set-cookie')).toBeNull();
    }
  });

  it('accepts the token as a bearer header, and from ?token= once, kept in an HttpOnly SameSite=Strict cookie', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, ['--token', TOKEN]);
    for (const path of PATHS) {
      const response = await fetch(`${dashboard.origin}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(response.status, path).toBe(200);
    }
    const first = await fetch(`${dashboard.origin}/workers?token=${encodeURIComponent(TOKEN)}`, { redirect: 'manual' });
    expect(first.status).toBe(303);
    // The token leaves the address bar.
    expect(first.headers.get('location')).toBe('/workers');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const pair = cookie.split(';')[0]!;
    const page = await fetch(`${dashboard.origin}/workers`, { headers: { Cookie: pair } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Workers</h1>');

    const events = await openEventStream(`${dashboard.origin}/events`, { headers: { Cookie: pair } });
    expect(events.status).toBe(200);
    expect(events.contentType).toMatch(/^text\/event-stream/);
    expect(await events.until(/event: hello\ndata: .*\n/)).toContain(`"queues":["${queue}"]`);
    await events.close();
  });

  it('takes the token from FITQ_DASHBOARD_TOKEN', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, [], { FITQ_DASHBOARD_TOKEN: 'from-env' });
    expect((await fetch(`${dashboard.origin}/`)).status).toBe(401);
    expect((await fetch(`${dashboard.origin}/`, { headers: { Authorization: 'Bearer from-env' } })).status).toBe(200);
  });

  it('serves loopback without a token, refuses any other --host without one (exit 2, one line quoting it), serves it with one', async () => {
    const queue = newQueue();
    const open = await startDashboard(queue);
    expect((await fetch(`${open.origin}/`)).status).toBe(200);

    for (const host of ['0.0.0.0']) {
      const refused = await fitq(['dashboard', '--port', '0', '--host', host], { queue, timeoutMs: 20_000 });
      expect(refused.exitCode, host).toBe(2);
      expect(refused.stderr).toBe(`Error: refusing to serve the dashboard on --host '${host}' without a token: give --token or FITQ_DASHBOARD_TOKEN (only 127.0.0.1, ::1 and localhost are served without one)`);
    }
    const empty = await fitq(['dashboard', '--port', '0', '--host', '0.0.0.0', '--token', ' '], { queue, timeoutMs: 20_000 });
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toBe('Error: --token (or FITQ_DASHBOARD_TOKEN) is empty');

    const guarded = await startDashboard(queue, ['--host', '0.0.0.0', '--token', 'abc']);
    expect(guarded.origin).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const local = guarded.origin.replace('0.0.0.0', '127.0.0.1');
    expect((await fetch(`${local}/`)).status).toBe(401);
    expect((await fetch(`${local}/`, { headers: { Authorization: 'Bearer abc' } })).status).toBe(200);
  });

  it('refuses bad flags in one line with exit 2', async () => {
    const queue = newQueue();
    const cases: [string[], string][] = [
      [['--port', '70000'], "Error: expected --port to be a port number from 0 to 65535, got '70000'"],
      [['--queue', 'a', '--queue', 'a'], "Error: --queue 'a' given twice"],
      [['--queue', 'bad name'], "Error: invalid queue name 'bad name': use letters, digits, '.', '_' and '-', starting with a letter or digit (at most 128 characters)"],
    ];
    for (const [args, stderr] of cases) {
      const result = await fitq(['dashboard', ...args], { queue, process: false });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(stderr);
    }
    const taken = await startDashboard(queue);
    const port = new URL(taken.origin).port;
    const busy = await fitq(['dashboard', '--port', port], { queue, process: false });
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toBe(`Error: cannot serve on '127.0.0.1' port ${port}: the port is in use (give another --port)`);
  });
});

describe('fitq dashboard content', () => {
  it('renders hostile commands as text and never an env value of a run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-dash-')), 'gate');
    const hostile = `<script>alert("x")</script><img src=x onerror='alert(1)'> ${'&lt;'.repeat(3)} ${'long-'.repeat(300)}`;
    const secret = 'sekrit-value-81c2';
    const { runs } = await client.stage({
      command: ['sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done; echo "$1"', gate, hostile],
      resources: 'slot=1',
      labels: { note: '<script>alert(2)</script>' },
      env: { API_KEY: secret },
    });
    const id = runs[0]!.id;
    await startTestWorker(queue, { name: 'w-hostile', resources: 'slot=1' });
    const dashboard = await startDashboard(queue);
    const workers = await waitFor('the run on the workers page', async () => {
      const text = await (await fetch(`${dashboard.origin}/workers`)).text();
      return text.includes(`worker-run-${id}`) && text;
    });
    // The command as text: every < and quote escaped, the long line whole.
    expect(workers).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt;');
    expect(workers).toContain('&amp;lt;&amp;lt;&amp;lt;');
    expect(workers).toContain('long-'.repeat(300));
    expect(workers).not.toMatch(/<script>alert|<img src=x/);
    for (const path of ['/', '/workers', '/pools', '/fragments/overview', '/fragments/workers', '/fragments/pools']) {
      const body = await (await fetch(`${dashboard.origin}${path}`)).text();
      expect(body, path).not.toContain(secret);
      expect(body, path).not.toContain('<script>alert');
    }
    writeFileSync(gate, '');
    await client.waitForEnd(id, 20_000);
  });
});
