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
import { sessionCookieName } from '../../src/dashboard/auth.js';
import { sharedBrowser, startDashboard } from '../support/browser.js';
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

  it('keeps a session in the cookie, not the token, under a name of its port: a cookie of another port is not accepted', async () => {
    const queue = newQueue();
    // Two dashboards with one token on one host: a browser sends either's cookie to both.
    const [a, b] = [await startDashboard(queue, ['--token', TOKEN]), await startDashboard(queue, ['--token', TOKEN])];
    const login = async (origin: string) => {
      const first = await fetch(`${origin}/?token=${encodeURIComponent(TOKEN)}`, { redirect: 'manual' });
      expect(first.status).toBe(303);
      return (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    };
    const [pairA, pairB] = [await login(a.origin), await login(b.origin)];
    const [nameA, valueA] = [pairA.slice(0, pairA.indexOf('=')), pairA.slice(pairA.indexOf('=') + 1)];
    expect(nameA).toBe(sessionCookieName(Number(new URL(a.origin).port)));
    expect(pairB.slice(0, pairB.indexOf('='))).toBe(sessionCookieName(Number(new URL(b.origin).port)));
    expect(nameA).not.toBe(pairB.slice(0, pairB.indexOf('=')));
    for (const form of [TOKEN, encodeURIComponent(TOKEN), Buffer.from(TOKEN).toString('base64'), Buffer.from(TOKEN).toString('base64url')]) {
      expect(decodeURIComponent(valueA)).not.toContain(form);
      expect(valueA).not.toContain(form);
    }
    expect((await fetch(`${a.origin}/`, { headers: { Cookie: pairA } })).status).toBe(200);
    // A's cookie at B, as a browser sends it, or renamed to B's name: refused.
    expect((await fetch(`${b.origin}/`, { headers: { Cookie: pairA } })).status).toBe(401);
    expect((await fetch(`${b.origin}/`, { headers: { Cookie: `${pairB.slice(0, pairB.indexOf('='))}=${valueA}` } })).status).toBe(401);
    expect((await fetch(`${b.origin}/`, { headers: { Cookie: pairB } })).status).toBe(200);
    // The token itself is no cookie.
    expect((await fetch(`${a.origin}/`, { headers: { Cookie: `${nameA}=${encodeURIComponent(TOKEN)}` } })).status).toBe(401);
    expect((await fetch(`${a.origin}/`, { headers: { Cookie: `fitq_dashboard_token=${encodeURIComponent(TOKEN)}` } })).status).toBe(401);
    // A session a restart ended does not stand in the way of logging in again.
    const again = await fetch(`${a.origin}/?token=${encodeURIComponent(TOKEN)}`, { headers: { Cookie: `${nameA}=ended` }, redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('set-cookie')).toContain(`${nameA}=${valueA};`);
  });

  it('in Chromium, a login on one port sends neither the token nor a session another port accepts', async () => {
    const queue = newQueue();
    const [a, b] = [await startDashboard(queue, ['--token', TOKEN]), await startDashboard(queue, ['--token', TOKEN])];
    const context = await (await sharedBrowser()).newContext();
    try {
      const page = await context.newPage();
      const cookieHeaders: string[] = [];
      page.on('request', (request) => void request.allHeaders().then((headers) => headers.cookie !== undefined && cookieHeaders.push(headers.cookie)));
      expect((await page.goto(`${a.origin}/?token=${encodeURIComponent(TOKEN)}`))?.status()).toBe(200);
      expect(new URL(page.url()).search).toBe('');
      expect((await page.goto(`${b.origin}/workers`))?.status()).toBe(401);
      await page.getByTestId('unauthorized').waitFor();
      const cookies = await context.cookies();
      expect(cookies.map((cookie) => cookie.name)).toEqual([sessionCookieName(Number(new URL(a.origin).port))]);
      expect(cookieHeaders.length).toBeGreaterThan(0);
      for (const header of cookieHeaders) expect(decodeURIComponent(header)).not.toContain(TOKEN);
    } finally {
      await context.close();
    }
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
    await client.waitForEnd(id);
  });
});
