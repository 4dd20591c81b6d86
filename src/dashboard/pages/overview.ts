/**
 * Overview: per namespace, side by side: runs by status, live workers, the
 * staged runs by demand shape, and runs started and ended per minute over
 * the last hour with their durations.
 */
import type { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { formatDuration } from '../../units/time.js';
import type { FitqClient } from '../../client.js';
import { serverTimeMs } from '../../model/liveness.js';
import { RUN_STATUSES } from '../../model/run-record.js';
import type { StagedShape } from '../../model/run-summary.js';
import { readRecentRuns, readRunCounts, readStagedShapes, RECENT_MOST, SHAPES_MOST, type RunCounts } from '../../operations/overview.js';
import { workerState } from '../../model/worker-record.js';
import { ACTIVITY_MINUTES, activityOf, MINUTE_MS, type Activity } from '../activity.js';
import { activityChart } from '../chart.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import { cachedFragment } from '../fragment-cache.js';
import type { LiveTopic } from '../../live/feed.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';

interface NamespaceOverview {
  queue: string;
  /** fitq pause: no worker starts a run. */
  paused: boolean;
  counts: RunCounts;
  workers: { live: number; busy: number; draining: number };
  shapes: StagedShape[];
  /** Shapes with staged runs in all (the table shows at most SHAPES_MOST). */
  shapeTotal: number;
  /** Shape -> why its first run waits, as `fitq runs` says it. */
  why: Map<string, string>;
  activity: Activity;
  /** The activity was drawn from the most recent ended runs only (RECENT_MOST): more ended in the hour. */
  sampled: boolean;
}

/** Shapes explained at most on the overview: past them, `fitq runs` (or the runs page) says why. */
const EXPLAINED_SHAPES = 20;

/** Why the first run of each shape waits: fitq's own explanation (the WHY column of `fitq runs`). */
async function whyHeadsWait(client: FitqClient, shapes: readonly StagedShape[]): Promise<Map<string, string>> {
  const why = new Map<string, string>();
  for (const shape of shapes.slice(0, EXPLAINED_SHAPES)) {
    if (shape.head === undefined) continue;
    // Started, or gone, since the shapes were read: nothing to explain.
    const run = await client.getRun(shape.head).catch(() => undefined);
    if (run?.status === 'staged' && run.reason) why.set(shape.shape, run.reason);
  }
  return why;
}

async function readOverview(queue: string, client: FitqClient): Promise<NamespaceOverview> {
  // Reads only, as `fitq runs` does (workers whose lease ran out are not listed).
  const now = serverTimeMs(await client.redis.time());
  const [counts, recent, shapes, workers, paused] = await Promise.all([
    readRunCounts(client),
    readRecentRuns(client, now - ACTIVITY_MINUTES * MINUTE_MS),
    readStagedShapes(client),
    client.listWorkers(),
    client.isPaused(),
  ]);
  return {
    queue,
    paused,
    why: await whyHeadsWait(client, shapes),
    counts,
    workers: {
      live: workers.length,
      busy: workers.filter((worker) => worker.runs.length > 0).length,
      draining: workers.filter((worker) => workerState(worker) !== 'active').length,
    },
    shapes,
    shapeTotal: shapes.total ?? shapes.length,
    activity: activityOf(recent.runs, now),
    sampled: !recent.complete,
  };
}

function namespacePanel(overview: NamespaceOverview): Html {
  const { queue, workers, shapes, why, activity } = overview;
  const { counts, lumped, total } = overview.counts;
  return html`<section class="panel" data-testid="ns-${queue}" data-queue="${queue}">
  <div class="panel-head"><h2>${queue}</h2>${overview.paused ? html`<span class="pill warn" data-testid="paused" title="fitq resume starts runs again">paused</span>` : ''}<span class="sub" data-testid="run-total">${total} run${total === 1 ? '' : 's'}</span>
    <span class="sub" data-testid="worker-summary">${workers.live} worker${workers.live === 1 ? '' : 's'}, ${workers.busy} busy${workers.draining > 0 ? `, ${workers.draining} drained or draining` : ''}</span></div>
  <div class="counts">
    ${RUN_STATUSES.map((status) => (counts[status] === undefined ? '' : html`<div class="count${counts[status] === 0 ? ' zero' : ''}" data-status="${status}"><div class="n" data-testid="count-${status}">${counts[status]}</div><div class="label">${status}</div></div>`))}
    ${lumped.map(({ name, label, count }) => html`<div class="count" data-status="${name}" title="too many runs to tell apart without reading each"><div class="n" data-testid="count-${name}">${count}</div><div class="label">${label}</div></div>`)}
  </div>
  <div class="ns-body"><div>
  <h3 class="section-label">Staged runs by shape</h3>
  ${shapes.length === 0
    ? html`<p class="empty" data-testid="shapes-empty">No staged runs waiting.</p>`
    : html`<div class="table-wrap"><table data-testid="staged-shapes"><thead><tr><th>Demands</th><th class="num">Runs</th><th>Why the first waits</th></tr></thead><tbody>
      ${shapes.map((shape) => html`<tr data-testid="shape-row"><td class="mono wrap-anywhere">${shape.demands}${shape.gpus.length > 0 ? html` <span class="pill soft" title="pinned GPU devices">@${shape.gpus.join(',')}</span>` : ''}${shape.timeLimitMs === undefined ? '' : html` <span class="pill soft" title="time limit">≤ ${formatDuration(shape.timeLimitMs)}</span>`}</td><td class="num" data-testid="shape-count">${shape.count}</td><td class="why wrap-anywhere" data-testid="shape-why">${why.get(shape.shape) ?? ''}</td></tr>`)}
    </tbody></table></div>${overview.shapeTotal > shapes.length ? html`<p class="sub" data-testid="shapes-more">The ${SHAPES_MOST} shapes whose first run is oldest, of ${overview.shapeTotal}: the runs page lists them all.</p>` : ''}`}
  </div><div>
  <h3 class="section-label">Last hour</h3>
  ${activityChart(activity, `${queue}: ${activity.started} runs started and ${activity.ended} ended in the last hour`)}
  <p class="sub" data-testid="activity-summary">${activity.started} started, ${activity.ended} ended in the last hour${activity.medianDurationMs === undefined ? '' : `; median duration ${formatDuration(activity.medianDurationMs)}`}${overview.sampled ? ` (of the last ${RECENT_MOST} completed and ${RECENT_MOST} otherwise ended: more ended)` : ''}</p>
  </div></div>
</section>`;
}

async function overviewFragment(context: DashboardContext): Promise<Html> {
  const overviews = await Promise.all([...context.clients].map(([queue, client]) => readOverview(queue, client)));
  return html`<div class="grid">${overviews.map(namespacePanel)}</div>`;
}

/** What changes this page: its region's `data-live-topics`, and when its cached fragment is stale. */
const TOPICS: readonly LiveTopic[] = ['runs', 'workers'];

export function registerOverview(app: Hono<DashboardEnv>, context: DashboardContext): void {
  const fragment = () => cachedFragment(context, 'overview', TOPICS, async () => String(await overviewFragment(context)));
  app.get('/fragments/overview', async (c) => c.html(fragment()));
  app.get('/', async (c) =>
    c.html(
      dashboardPage(context, {
        title: 'Overview',
        active: 'overview',
        body: html`<h1>Overview</h1>
<div data-live="/fragments/overview" data-live-topics="${TOPICS.join(' ')}" data-testid="overview">${raw(await fragment())}</div>`,
      }),
    ),
  );
}
