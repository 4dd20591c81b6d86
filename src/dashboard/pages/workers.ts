/**
 * Workers: per namespace, each live worker: its state, liveness and lease,
 * capacity against what is reserved per resource, its GPU devices and who
 * holds them, the runs it runs, and the blocked head it holds resources for.
 * With --allow-actions, drain and undrain above them (workers-actions.ts).
 */
import type { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { formatDuration } from '../../units/time.js';
import type { FitqClient } from '../../client.js';
import { formatAge } from '../../model/liveness.js';
import { formatDemands } from '../../model/run-data.js';
import type { RunRecord } from '../../model/run-record.js';
import { describeCapacity, workerState, type WorkerRecord } from '../../model/worker-record.js';
import { bar } from '../bars.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import { cachedFragment } from '../fragment-cache.js';
import type { LiveTopic } from '../../live/feed.js';
import { gpuMap } from '../gpu-map.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';
import { runHref, runsHref } from '../run-links.js';
import { drainKey, registerWorkerActions, workerActionsPanel } from './workers-actions.js';

const STATE_PILL = { active: 'ok', draining: 'warn', drained: 'soft' } as const;

async function readWorkersView(client: FitqClient): Promise<{ workers: WorkerRecord[]; runs: RunRecord[] }> {
  const workers = await client.listWorkers();
  const runs = await client.readRuns([...new Set(workers.flatMap((worker) => [...worker.runs, ...(worker.holding ? [worker.holding.runId] : [])]))]);
  return { workers, runs };
}

/** What the worker holds back for its blocked head on a resource: as much of the head's need as is free. */
function heldFor(worker: WorkerRecord, resource: string): bigint {
  const need = worker.holding?.demands.get(resource) ?? 0n;
  const free = worker.free.get(resource) ?? 0n;
  return need < free ? need : free;
}

function runLine(queue: string, run: RunRecord | undefined, id: string, now: number): Html {
  if (!run) return html`<li><a class="mono" href="${runHref(queue, id)}">${id}</a><span class="cmd">(ended)</span></li>`;
  const command = run.shell ? (run.command[0] ?? '') : run.command.join(' ');
  return html`<li data-testid="worker-run-${run.id}"><a class="mono" href="${runHref(queue, run.id)}">${run.id}</a>
  ${run.requires ? html`<span class="pill soft">${run.requires}</span>` : ''}
  ${run.startedAt === undefined ? '' : html`<span class="sub" title="running for">${formatDuration(Math.max(0, now - run.startedAt))}</span>`}
  <span class="cmd" title="${command}">${command}</span></li>`;
}

function workerCard(queue: string, worker: WorkerRecord, runs: readonly RunRecord[], now: number): Html {
  const state = workerState(worker);
  const byId = new Map(runs.map((run) => [run.id, run]));
  const { liveness } = worker;
  const head = worker.holding;
  return html`<article class="panel" data-testid="worker-${worker.name}" data-state="${state}" data-drain-key="${drainKey(queue, worker)}">
  <div class="worker-head">
    <a class="worker-name" href="${runsHref({ queue, worker: worker.name })}" title="its runs">${worker.name}</a>
    <span class="pill ${STATE_PILL[state]}" data-testid="worker-state">${state}</span>
    ${liveness.responding ? '' : html`<span class="pill bad" data-testid="not-responding">not responding</span>`}
    <span class="pill soft" title="claim policy">${worker.policy}</span>
  </div>
  <div class="meta">
    <span>host <b>${worker.host}</b> pid <b>${worker.pid}</b></span>
    <span>heartbeat <b data-testid="heartbeat-age" data-age-ms="${liveness.heartbeatAgeMs}">${formatAge(liveness.heartbeatAgeMs)}</b> ago</span>
    <span>lease <b>${formatDuration(worker.leaseMs)}</b>, ${liveness.leaseLeftMs >= 0 ? html`ends in <b>${formatAge(liveness.leaseLeftMs)}</b>` : html`<b>ran out</b>`}</span>
    <span>runs <b data-testid="worker-run-count">${worker.runs.length}</b>${worker.concurrency > 0 ? html` of at most <b>${worker.concurrency}</b>` : ''}</span>
    ${worker.drainedAt === undefined ? '' : html`<span>drained <b>${formatAge(Math.max(0, now - worker.drainedAt))}</b> ago</span>`}
  </div>
  ${worker.capacity.size === 0
    ? html`<p class="empty">No resources declared (${describeCapacity(worker)}).</p>`
    : html`<div class="bars">${[...worker.capacity].map(([name, capacity]) =>
        bar({ name, capacity, used: capacity - (worker.free.get(name) ?? 0n), held: heldFor(worker, name), testId: `bar-${worker.name}-${name}` }),
      )}</div>`}
  ${gpuMap(queue, worker, runs)}
  <div class="section-label">Running</div>
  ${worker.runs.length === 0 ? html`<p class="empty">Idle.</p>` : html`<ul class="run-list">${worker.runs.map((id) => runLine(queue, byId.get(id), id, now))}</ul>`}
  ${head
    ? html`<div class="holding" data-testid="holding-${worker.name}">Holding resources for blocked head <a class="mono" href="${runHref(queue, head.runId)}">${head.runId}</a>: it needs <b>${formatDemands(head.demands) || 'nothing'}</b>${head.gpus.length > 0 ? html` on gpu ${head.gpus.join(',')}` : ''}; only runs that leave that free start here meanwhile.</div>`
    : ''}
  ${worker.blockedBy ? html`<div class="holding">Runs in order (fifo): every later run waits behind <a class="mono" href="${runHref(queue, worker.blockedBy)}">${worker.blockedBy}</a>.</div>` : ''}
</article>`;
}

async function workersFragment(context: DashboardContext): Promise<Html> {
  const all = await Promise.all([...context.clients].map(async ([queue, client]) => ({ queue, ...(await readWorkersView(client)) })));
  const now = Date.now();
  return html`${all.map(
    ({ queue, workers, runs }) => html`<section class="ns-block" data-testid="ns-${queue}">
  <div class="panel-head"><h2>${queue}</h2><span class="sub">${workers.length} live worker${workers.length === 1 ? '' : 's'}</span></div>
  ${workers.length === 0 ? html`<div class="panel"><p class="empty" data-testid="no-workers">No live workers. Start one with <code>fitq worker --queue ${queue} -r …</code>.</p></div>` : html`<div class="workers">${workers.map((worker) => workerCard(queue, worker, runs, now))}</div>`}
</section>`,
  )}`;
}

/** What changes this page: its region's `data-live-topics`, and when its cached fragment is stale. */
const TOPICS: readonly LiveTopic[] = ['workers', 'runs'];

export function registerWorkers(app: Hono<DashboardEnv>, context: DashboardContext): void {
  const fragment = () => cachedFragment(context, 'workers', TOPICS, async () => String(await workersFragment(context)));
  app.get('/fragments/workers', async (c) => c.html(fragment()));
  registerWorkerActions(app, context);
  app.get('/workers', async (c) =>
    c.html(
      dashboardPage(context, {
        title: 'Workers',
        active: 'workers',
        body: html`<h1>Workers</h1>
<p class="lede">Capacity against what running runs reserve; striped: held back for a blocked head.</p>
${await workerActionsPanel(context)}
<div data-live="/fragments/workers" data-live-topics="${TOPICS.join(' ')}" data-testid="workers">${raw(await fragment())}</div>`,
      }),
    ),
  );
}
