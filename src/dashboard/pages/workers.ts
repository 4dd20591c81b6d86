/** Workers: per namespace, each live worker (filled in below the skeleton). */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { DashboardContext, DashboardEnv } from '../context.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';

async function workersFragment(context: DashboardContext): Promise<Html> {
  const all = await Promise.all([...context.clients].map(async ([queue, client]) => ({ queue, workers: await client.listWorkers() })));
  return html`${all.map(({ queue, workers }) => html`<section class="panel" data-testid="ns-${queue}"><h2>${queue}</h2>
  ${workers.length === 0 ? html`<p class="empty">No live workers.</p>` : html`<ul>${workers.map((worker) => html`<li data-testid="worker-${worker.name}">${worker.name}</li>`)}</ul>`}</section>`)}`;
}

export function registerWorkers(app: Hono<DashboardEnv>, context: DashboardContext): void {
  app.get('/fragments/workers', async (c) => c.html(await workersFragment(context)));
  app.get('/workers', async (c) =>
    c.html(
      dashboardPage(context, {
        title: 'Workers',
        active: 'workers',
        body: html`<h1>Workers</h1><div data-live="/fragments/workers" data-live-topics="workers runs">${await workersFragment(context)}</div>`,
      }),
    ),
  );
}
