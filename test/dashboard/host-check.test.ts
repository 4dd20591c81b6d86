/**
 * The dashboard answers only to the names it is reached by, as the real
 * `fitq dashboard` process serves it: a request naming another host (a web
 * page that rebinds a name of its own to 127.0.0.1) is refused on every
 * route and stream, with or without a token; loopback names, the bound
 * address and `--allow-host` names pass. In real headless Chromium, a page
 * at a rebound name reads nothing.
 */
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { boardQueueName } from '../../src/dashboard/bull-board.js';
import { chromiumExecutable, startDashboard } from '../support/browser.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { rawRequest } from '../support/raw-http.js';

const FOREIGN = 'rebind.attacker.example';

/** Every kind of route: pages, fragments, assets, the event streams, Bull Board (page, API, assets) and /metrics. */
function routes(queue: string, board: string, runId: string): string[] {
  return [
    '/', '/workers', '/pools', '/runs', `/runs/${queue}/${runId}`, '/fragments/overview', '/fragments/runs', '/assets/style.css',
    '/events', `/runs/${queue}/${runId}/log`, '/bull', `/bull/queue/${board}`, '/bull/api/queues', `/bull/api/queues/${board}/${runId}`, '/metrics',
  ];
}

describe('fitq dashboard: the Host a request names', () => {
  it('refuses a foreign Host on every route and stream (421, a page saying so), and acts on nothing; loopback names pass', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1' });
    const runId = runs[0]!.id;
    const board = encodeURIComponent(boardQueueName(queue, client.keys.queue.name));
    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const port = new URL(dashboard.origin).port;

    for (const path of routes(queue, board, runId)) {
      const refused = await rawRequest(dashboard.origin, path, { headers: { host: `${FOREIGN}:${port}` }, maxBytes: 100_000 });
      expect(refused.status, path).toBe(421);
      expect(refused.body, path).toContain(`does not answer to the host <code>${FOREIGN}</code>`);
      expect(refused.body, path).toContain('--allow-host');
      expect(String(refused.headers['content-type']), path).toMatch(/^text\/html/);
    }
    // Changes are refused too, before they reach Redis.
    for (const [method, path] of [['PUT', '/bull/api/queues/pause'], ['PUT', `/bull/api/queues/${board}/pause`], ['POST', `/actions/runs/${queue}/${runId}/hold`]] as const) {
      const refused = await rawRequest(dashboard.origin, path, { method, headers: { host: FOREIGN, 'content-type': 'application/json' } });
      expect(refused.status, `${method} ${path}`).toBe(421);
    }
    expect(await client.isPaused()).toBe(false);
    expect((await client.getRun(runId)).status).toBe('staged');
    // A Host in another form, or none usable.
    for (const host of [`${FOREIGN.toUpperCase()}.`, `127.0.0.1.${FOREIGN}`, 'localhost.attacker.example', '[::2]', '10.1.2.3']) {
      expect((await rawRequest(dashboard.origin, '/', { headers: { host } })).status, host).toBe(421);
    }

    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST.:${port}`, `[::1]:${port}`, '127.0.0.1']) {
      for (const path of ['/', '/bull/api/queues', '/metrics', '/events', `/runs/${queue}/${runId}/log`]) {
        const allowed = await rawRequest(dashboard.origin, path, { headers: { host }, maxBytes: 0 });
        expect(allowed.status, `${host} ${path}`).toBe(200);
      }
    }
  });

  it('passes the names given with --allow-host (any case, any port), and checks the Host with a token too', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, ['--token', 'tok-1', '--allow-host', 'dash.example.org', '--allow-host', '192.0.2.7']);
    const bearer = { authorization: 'Bearer tok-1' };
    for (const host of ['dash.example.org', 'Dash.Example.Org:8443', '192.0.2.7:80', '127.0.0.1']) {
      expect((await rawRequest(dashboard.origin, '/', { headers: { host, ...bearer } })).status, host).toBe(200);
    }
    for (const host of [FOREIGN, 'example.org', 'www.dash.example.org', '192.0.2.8']) {
      const refused = await rawRequest(dashboard.origin, '/metrics', { headers: { host, ...bearer } });
      expect(refused.status, host).toBe(421);
    }
    // Before the token: a foreign Host learns nothing of it, not even that one is needed.
    const unknown = await rawRequest(dashboard.origin, '/', { headers: { host: FOREIGN } });
    expect(unknown.status).toBe(421);
    expect(unknown.headers['www-authenticate']).toBeUndefined();
  });

  it('bound to every address, answers to this machine\'s addresses and refuses other names', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, ['--host', '0.0.0.0', '--token', 'tok-2']);
    const local = dashboard.origin.replace('0.0.0.0', '127.0.0.1');
    const bearer = { authorization: 'Bearer tok-2' };
    expect((await rawRequest(local, '/', { headers: { host: new URL(local).host, ...bearer } })).status).toBe(200);
    expect((await rawRequest(local, '/', { headers: { host: FOREIGN, ...bearer } })).status).toBe(421);
  });

  it('refuses a bad --allow-host in one line quoting it, exit 2', async () => {
    const queue = newQueue();
    for (const value of ['http://dash.example.org', 'dash.example.org:8080', 'bad name', '', '*.example.org']) {
      const result = await fitq(['dashboard', '--port', '0', '--allow-host', value], { queue, timeoutMs: 20_000 });
      expect(result.exitCode, value).toBe(2);
      expect(result.stderr, value).toBe(`Error: expected --allow-host to be a host name or an IP address (like dash.example.org or 192.0.2.7, no port), got '${value}'`);
    }
  });

  it('in Chromium, a page at a name rebound to 127.0.0.1 reads nothing of the dashboard', async () => {
    const queue = newQueue();
    const dashboard = await startDashboard(queue, ['--allow-actions']);
    const port = new URL(dashboard.origin).port;
    // The browser resolves the attacker's name to this machine, as a rebinding DNS server would make it.
    const browser = await chromium.launch({ executablePath: chromiumExecutable(), args: [`--host-resolver-rules=MAP ${FOREIGN} 127.0.0.1`] });
    try {
      const page = await browser.newPage();
      const response = await page.goto(`http://${FOREIGN}:${port}/`);
      expect(response?.status()).toBe(421);
      await page.getByTestId('unknown-host').waitFor();
      const read = await page.evaluate(`fetch('/bull/api/queues').then((r) => r.status + ' ' + r.headers.get('content-type'))`);
      expect(read).toMatch(/^421 text\/html/);
      // The same page at the dashboard's own name is served.
      expect((await page.goto(`http://localhost:${port}/`))?.status()).toBe(200);
    } finally {
      await browser.close();
    }
  });
});
