/**
 * Pools: per namespace, each cluster-wide pool resource (licences, quotas,
 * an array's limit while it has runs) with its capacity and what running
 * runs reserve of it, as `fitq pool ls` lists them; then users' quotas,
 * each limit against what the user's runs hold, as `fitq quota ls`.
 */
import type { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { ARRAY_RESOURCE_PREFIX } from '../../resources/array-limit.js';
import { formatHumanAmount, MICROS_PER_UNIT } from '../../resources/amount.js';
import { DEFAULT_QUOTA_USER, formatQuota } from '../../model/quota.js';
import type { UserQuota } from '../../operations/quotas.js';
import { bar } from '../bars.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import { cachedFragment } from '../fragment-cache.js';
import type { LiveTopic } from '../../live/feed.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';

/** A user's quota as bars: each limit against what their runs hold (the default quota: its limits alone). */
function quotaBars({ user, quota, usage }: UserQuota): Html {
  const isDefault = user === DEFAULT_QUOTA_USER;
  const limits: [string, bigint, bigint][] = [];
  const count = (n: number) => BigInt(n) * MICROS_PER_UNIT;
  if (quota.running !== undefined) limits.push(['running', count(usage.running), count(quota.running)]);
  if (quota.staged !== undefined) limits.push(['staged', count(usage.open), count(quota.staged)]);
  for (const [name, limit] of quota.resources) limits.push([name, usage.resources.get(name) ?? 0n, limit]);
  return html`<div class="quota" data-testid="quota-${user}"><h4>${isDefault ? 'Everyone else (default)' : user}</h4>
  ${isDefault
    ? html`<p class="sub">${formatQuota(quota)}</p>`
    : html`<div class="bars">${limits.map(([name, used, capacity]) => bar({ name, capacity, used, testId: `quota-${user}-${name}` }))}</div>`}
</div>`;
}

async function poolsFragment(context: DashboardContext): Promise<Html> {
  const all = await Promise.all(
    [...context.clients].map(async ([queue, client]) => ({ queue, pool: await client.listPool(), quotas: await client.listQuotas() })),
  );
  return html`<div class="grid">${all.map(
    ({ queue, pool, quotas }) => html`<section class="panel" data-testid="ns-${queue}">
  <div class="panel-head"><h2>${queue}</h2><span class="sub">${pool.length} pool resource${pool.length === 1 ? '' : 's'}</span></div>
  ${pool.length === 0
    ? html`<p class="empty" data-testid="pool-empty">The pool is empty. <code>fitq pool set --queue ${queue} licence=4</code> shares a resource among every worker.</p>`
    : html`<div class="bars">${pool.map((resource) => bar({ name: resource.name, capacity: resource.capacity, used: resource.used, testId: `pool-${resource.name}` }))}</div>
  <div class="table-wrap" style="margin-top: .75rem"><table><thead><tr><th>Resource</th><th class="num">Capacity</th><th class="num">Reserved</th><th class="num">Free</th></tr></thead><tbody>
  ${pool.map((resource) => html`<tr><td class="mono wrap-anywhere">${resource.name}${resource.name.startsWith(ARRAY_RESOURCE_PREFIX) ? html` <span class="pill soft">array limit</span>` : ''}</td><td class="num">${formatHumanAmount(resource.capacity)}</td><td class="num">${formatHumanAmount(resource.used)}</td><td class="num">${formatHumanAmount(resource.capacity - resource.used)}</td></tr>`)}
  </tbody></table></div>`}
  ${quotas.length === 0
    ? ''
    : html`<h3 style="margin-top: 1rem">Quotas</h3><p class="sub">What each user's runs may hold at once (<code>fitq quota ls</code>): staged counts their runs not ended.</p>${quotas.map(quotaBars)}`}
</section>`,
  )}</div>`;
}

/** What changes this page: its region's `data-live-topics`, and when its cached fragment is stale. */
const TOPICS: readonly LiveTopic[] = ['pool'];

export function registerPools(app: Hono<DashboardEnv>, context: DashboardContext): void {
  const fragment = () => cachedFragment(context, 'pools', TOPICS, async () => String(await poolsFragment(context)));
  app.get('/fragments/pools', async (c) => c.html(fragment()));
  app.get('/pools', async (c) =>
    c.html(
      dashboardPage(context, {
        title: 'Pools',
        active: 'pools',
        body: html`<h1>Pools</h1>
<p class="lede">Resources shared by every worker of a namespace; a run's demand on them is reserved with the rest of its claim. Users' quotas bound what each user's runs hold at once.</p>
<div data-live="/fragments/pools" data-live-topics="${TOPICS.join(' ')}" data-testid="pools">${raw(await fragment())}</div>`,
      }),
    ),
  );
}
