/**
 * The dashboard's web app: access checks first (the host, then the token),
 * then local assets, the live event stream and the pages. Each page
 * registers its own routes.
 */
import { Hono } from 'hono';
import { html } from 'hono/html';
import { oneLine } from '../text/quote.js';
import { requireToken } from './auth.js';
import { requireKnownHost } from './host-check.js';
import { registerAssets } from './assets/assets.js';
import type { DashboardContext } from './context.js';
import type { DashboardEnv } from './env.js';
import { dashboardPage } from './page.js';
import { registerLive } from './events-route.js';
import { registerOverview } from './pages/overview.js';
import { registerPools } from './pages/pools.js';
import { registerWorkers } from './pages/workers.js';
import { registerRun } from './pages/run.js';
import { registerRuns } from './pages/runs.js';
import { registerActions } from './actions.js';
import { namespaceMetricsResponse } from '../metrics/namespace.js';
import { mountBullBoard } from './bull-board.js';
import { runHref } from './run-links.js';

/**
 * Pages load only what this server serves; inline styles are allowed for
 * the widths of bars. Bull Board (/bull) brings its own page and rules.
 */
const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function createDashboardApp(context: DashboardContext): Hono<DashboardEnv> {
  const app = new Hono<DashboardEnv>();
  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    if (!c.req.path.startsWith('/bull')) {
      c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      c.header('X-Frame-Options', 'DENY');
    }
  });
  // After the headers' middleware, so a refusal carries them too. The host
  // first: a page of another site learns nothing, not even that a token is needed.
  app.use('*', requireKnownHost(context.hosts));
  app.use('*', requireToken(context.token));
  registerAssets(app);
  registerLive(app, context);
  registerOverview(app, context);
  registerWorkers(app, context);
  registerPools(app, context);
  registerRuns(app, context);
  registerRun(app, context);
  registerActions(app, context);
  app.get('/metrics', () => namespaceMetricsResponse(context.clients, { shapes: context.metricsShapes }));
  const board = mountBullBoard(app, { basePath: '/bull', clients: context.clients, readOnly: !context.allowActions, runHref });
  context.closers.push(() => board.close());
  app.notFound((c) =>
    c.html(dashboardPage(context, { title: 'Not found', body: html`<h1>Not found</h1><p class="empty">Nothing is at ${c.req.path}.</p>` }), 404),
  );
  app.onError((error, c) => {
    // One line, no stack: what failed is usually Redis (away, or refusing this user a command).
    process.stderr.write(`Error: ${oneLine(`${c.req.method} ${c.req.path}: ${error.message}`)}\n`);
    return c.html(dashboardPage(context, { title: 'Error', body: html`<h1>Something failed</h1><p data-testid="error">${error.message}</p>` }), 500);
  });
  return app;
}
