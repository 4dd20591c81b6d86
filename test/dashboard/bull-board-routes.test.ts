/**
 * The mounted board without a browser: its pages name no other origin and
 * carry a same-origin Content-Security-Policy (Bull Board's own page asks
 * Google for fonts), it answers at its base path, and every route of Bull
 * Board's API that changes a queue is either one fitq follows (let through
 * only with actions allowed, and only from the board's own page) or refused
 * with why; a new route a Bull Board upgrade brings is listed here before it
 * is let through.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { appRoutes } from '@bull-board/api/dist/routes.js';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { refusalOf } from '../../src/dashboard/bull-board-actions.js';
import { mountBullBoard, type MountedBullBoard } from '../../src/dashboard/bull-board.js';
import { SAME_ORIGIN_POLICY, withoutExternalAssets } from '../../src/dashboard/offline-page.js';
import { connectClient, indexedShapes, newQueue } from '../support/fitq.js';

const opened: MountedBullBoard[] = [];
afterEach(async () => {
  for (const board of opened.splice(0)) await board.close();
});

/** Bull Board's page template, as installed. */
function boardTemplate(): string {
  const ui = dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json'));
  return readFileSync(join(ui, 'dist', 'index.ejs'), 'utf8');
}

/** Every src and href value of the HTML. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)\s*=\s*["']?([^"'\s>]+)/gi)].map((match) => match[1]!);
}

const offOrigin = (url: string) => /^(?:[a-z][a-z0-9+.-]*:)?\/\//i.test(url);

describe("the board's page", () => {
  it("loses Bull Board's external font stylesheet, and any other external link or script, and keeps its own assets", () => {
    const template = boardTemplate();
    expect(assetUrls(template).filter(offOrigin)).toEqual([expect.stringMatching(/^https:\/\/fonts\.googleapis\.com\//)]);
    const rewritten = withoutExternalAssets(template);
    expect(assetUrls(rewritten).filter(offOrigin)).toEqual([]);
    expect(assetUrls(rewritten).filter((url) => url.startsWith('static/'))).toEqual(assetUrls(template).filter((url) => url.startsWith('static/')));
    expect(rewritten.replace(/\s+/g, '')).toBe(template.replace(/<link[^>]*googleapis[^>]*>/, '').replace(/\s+/g, ''));

    const hostile = [
      '<head><link rel="stylesheet" href="//cdn.example.com/a.css"><link href=\'HTTPS://x.example/b.css\' rel=stylesheet>',
      '<script defer src="https://cdn.example.com/x.js"></script><script src=http://x.example/y.js></script>',
      '<link href="static/own.css" rel="stylesheet"><script src="static/own.js"></script></head>',
    ].join('\n');
    expect(assetUrls(withoutExternalAssets(hostile))).toEqual(['static/own.css', 'static/own.js']);
  });

  it('served: at its base path (and its base path with a slash, redirected), with no external URL and a same-origin policy', async () => {
    const namespace = newQueue();
    const app = new Hono();
    const board = mountBullBoard(app, { basePath: '/bull', clients: new Map([[namespace, await connectClient(namespace)]]), readOnly: true });
    opened.push(board);
    expect(board.queueNames).toEqual(new Map([[namespace, `${namespace}:runs`]]));
    for (const path of ['/bull', `/bull/queue/${encodeURIComponent(`${namespace}:runs`)}`]) {
      const page = await app.request(path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(SAME_ORIGIN_POLICY);
      const html = await page.text();
      expect(html).toContain('<base href="/bull/"');
      expect(assetUrls(html).filter(offOrigin)).toEqual([]);
      for (const asset of assetUrls(html).filter((url) => url.startsWith('static/'))) {
        expect((await app.request(`/bull/${asset}`)).status, asset).toBe(200);
      }
    }
    const slash = await app.request('/bull/');
    expect([slash.status, slash.headers.get('location')]).toEqual([302, '/bull']);
    const queues = (await (await app.request('/bull/api/queues')).json()) as { queues: { name: string; displayName: string; readOnlyMode: boolean }[] };
    expect(queues.queues.map(({ name, displayName, readOnlyMode }) => ({ name, displayName, readOnlyMode }))).toEqual([
      { name: `${namespace}:runs`, displayName: namespace, readOnlyMode: true },
    ]);
  });

  it("with actions allowed, a change asked by another site's page is refused; the board's own page's goes through", async () => {
    const namespace = newQueue();
    const client = await connectClient(namespace);
    const app = new Hono();
    const board = mountBullBoard(app, { basePath: '/bull', clients: new Map([[namespace, client]]), readOnly: false });
    opened.push(board);
    const pause = `/bull/api/queues/${encodeURIComponent(board.queueNames.get(namespace)!)}/pause`;
    const put = (headers: Record<string, string>) => app.request(pause, { method: 'PUT', headers: { host: '127.0.0.1:7070', ...headers } });
    const fromElsewhere: Record<string, string>[] = [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'http://evil.example' }, { origin: 'null' }];
    for (const headers of fromElsewhere) {
      const answer = await put(headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(await answer.text()).toContain("a change asked by another site's page");
      expect(await client.isPaused()).toBe(false);
    }
    expect((await put({ 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:7070' })).status).toBe(200);
    expect(await client.isPaused()).toBe(true);
  });

  it("with actions allowed, fitq follows the board's remove (a card's bin), priority change and empty: its index holds what BullMQ holds, in order", async () => {
    const namespace = newQueue();
    const client = await connectClient(namespace);
    const app = new Hono();
    const board = mountBullBoard(app, { basePath: '/bull', clients: new Map([[namespace, client]]), readOnly: false });
    opened.push(board);
    const api = `/bull/api/queues/${encodeURIComponent(board.queueNames.get(namespace)!)}`;
    const call = (method: string, path: string, body?: unknown) =>
      app.request(`${api}${path}`, { method, headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const { runs } = await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 3, priority: 5 });
    const [removed, raised, kept] = runs.map((run) => run.id) as [string, string, string];

    expect((await call('PUT', `/${removed}/clean`)).status).toBe(204);
    expect((await call('PATCH', `/${raised}/priority`, { priority: 1 })).status).toBe(200); // BullMQ's highest: fitq's 1,000,000
    const listed = await client.listRuns(); // the board's actions caught up with BullMQ
    expect(listed.map((run) => [run.id, run.status, run.priority])).toEqual([[raised, 'staged', 1_000_000], [kept, 'staged', 5]]);
    const [shape, ...more] = await indexedShapes(client);
    expect(more).toEqual([]);
    expect(await client.redis.zrange(client.keys.staged(shape!), 0, -1)).toEqual([raised, kept]);

    // Empty: BullMQ removes the staged runs, fitq forgets them.
    expect((await call('PUT', '/empty')).status).toBe(200);
    expect(await client.listRuns()).toEqual([]);
    expect(await indexedShapes(client)).toEqual([]);
  });

  it('refuses a base path that is no path', () => {
    expect(() => mountBullBoard(new Hono(), { basePath: 'bull', clients: new Map(), readOnly: true })).toThrow("like '/bull': got 'bull'");
    expect(() => mountBullBoard(new Hono(), { basePath: '/', clients: new Map(), readOnly: true })).toThrow("got '/'");
  });
});

describe("Bull Board's API routes", () => {
  /** The changes fitq follows (docs/redis-keys.md#bullmqs-actions, test/bullmq/actions.test.ts). */
  const FOLLOWED = [
    'put /api/queues/:queueName/:jobId/retry',
    'put /api/queues/:queueName/retry/:queueStatus',
    'put /api/queues/:queueName/:jobId/clean',
    'put /api/queues/:queueName/clean/:queueStatus',
    'put /api/queues/:queueName/:jobId/promote',
    'put /api/queues/:queueName/promote',
    'patch /api/queues/:queueName/:jobId/priority',
    'put /api/queues/:queueName/pause',
    'put /api/queues/:queueName/resume',
    'put /api/queues/pause',
    'put /api/queues/resume',
    'put /api/queues/:queueName/empty',
    'put /api/queues/:queueName/obliterate',
  ];
  const routes = appRoutes.api.flatMap(({ method, route }) =>
    [method].flat().flatMap((m) => [route].flat().map((r) => ({ method: m, route: r, key: `${m} ${r}` }))),
  );

  it('reads always; changes never while read-only', () => {
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      if (route.method === 'get') {
        expect(refusalOf(route, false), route.key).toBeUndefined();
        expect(refusalOf(route, true), route.key).toBeUndefined();
      } else {
        expect(refusalOf(route, false), route.key).toMatch(/^the dashboard is read-only: start it with --allow-actions/);
      }
    }
  });

  it('with actions allowed: the changes fitq follows, and each other change refused with its own reason', () => {
    const changes = routes.filter((route) => route.method !== 'get');
    const allowed = changes.filter((route) => refusalOf(route, true) === undefined).map((route) => route.key);
    expect(allowed.sort()).toEqual([...FOLLOWED].sort());
    for (const route of changes.filter((change) => !FOLLOWED.includes(change.key))) {
      // Not the catch-all: someone read this route and wrote down why fitq cannot follow it.
      expect(refusalOf(route, true), route.key).not.toMatch(/fitq does not follow this change/);
    }
    expect(refusalOf({ method: 'PUT', route: '/api/queues/:queueName/something-new' }, true)).toMatch(/fitq does not follow this change to its queue \(put \/api\/queues\/:queueName\/something-new\)/);
  });
});
