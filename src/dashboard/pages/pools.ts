/** Pools: per namespace, each pool resource's capacity and use (filled in below the skeleton). */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { formatMicros } from '../../resources/amount.js';
import type { DashboardContext, DashboardEnv } from '../context.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';

async function poolsFragment(context: DashboardContext): Promise<Html> {
  const all = await Promise.all([...context.clients].map(async ([queue, client]) => ({ queue, pool: await client.listPool() })));
  return html`${all.map(({ queue, pool }) => html`<section class="panel" data-testid="ns-${queue}"><h2>${queue}</h2>
  ${pool.length === 0 ? html`<p class="empty">The pool is empty.</p>` : html`<ul>${pool.map((r) => html`<li data-testid="pool-${r.name}">${r.name}: ${formatMicros(r.used)} / ${formatMicros(r.capacity)}</li>`)}</ul>`}</section>`)}`;
}

export function registerPools(app: Hono<DashboardEnv>, context: DashboardContext): void {
  app.get('/fragments/pools', async (c) => c.html(await poolsFragment(context)));
  app.get('/pools', async (c) =>
    c.html(
      dashboardPage(context, {
        title: 'Pools',
        active: 'pools',
        body: html`<h1>Pools</h1><div data-live="/fragments/pools" data-live-topics="pool">${await poolsFragment(context)}</div>`,
      }),
    ),
  );
}
