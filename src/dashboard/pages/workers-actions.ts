/**
 * Drain and undrain on the workers page (with --allow-actions): a panel
 * outside the page's live region, one line per live worker with its
 * confirm step. A live refresh replaces the region's content and would
 * close a step a user opened, so the page's script fetches the panel again
 * (/fragments/workers/actions) only when the region shows a worker come,
 * go, or be drained or undrained, and keeps as they are the lines of the
 * workers that did not change.
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { WorkerRecord } from '../../model/worker-record.js';
import { workerActionForms } from '../actions.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import type { Html } from '../layout.js';
import { RUNS_STYLESHEET } from './runs-style.js';

const FRAGMENT = '/fragments/workers/actions';
const SCRIPT = '/assets/workers-page.js';

/** What a worker's action line depends on: the worker, and whether it is drained. Cards and lines carry it as data-drain-key. */
export function drainKey(queue: string, worker: WorkerRecord): string {
  return `${queue}/${worker.name}/${worker.drainedAt === undefined ? 'active' : 'drained'}`;
}

async function actionLines(context: DashboardContext): Promise<Html> {
  const all = await Promise.all([...context.clients].map(async ([queue, client]) => ({ queue, workers: await client.listWorkers() })));
  const several = all.length > 1;
  return html`${all.map(({ queue, workers }) => html`${several ? html`<h3>${queue}</h3>` : ''}${workers.length === 0
    ? html`<p class="empty">No live workers${several ? ` in ${queue}` : ''}.</p>`
    : workers.map((worker) => html`<div class="worker-action-line" data-drain-key="${drainKey(queue, worker)}" data-testid="worker-action-line-${worker.name}">
  <b class="mono wrap-anywhere">${worker.name}</b>${workerActionForms(context, queue, worker.name, worker.drainedAt !== undefined, 'workers')}
</div>`)}`)}`;
}

/** The panel, its script and the actions' styles; nothing without --allow-actions. */
export async function workerActionsPanel(context: DashboardContext): Promise<Html | ''> {
  if (!context.allowActions) return '';
  return html`${RUNS_STYLESHEET}<script src="${SCRIPT}" defer></script>
<section class="panel worker-actions" data-testid="worker-actions-panel" data-actions-src="${FRAGMENT}">
  <h2>Drain or undrain</h2>
  <div data-testid="worker-action-lines">${await actionLines(context)}</div>
</section>`;
}

/**
 * Watches the live region (data-testid="workers"): when the drain keys of
 * its cards differ from those it last asked for, fetches the lines again
 * and puts them in, each line whose key is unchanged kept as it is (an open
 * confirm step stays open).
 */
const WORKERS_PAGE_JS = String.raw`(() => {
  'use strict';
  const live = document.querySelector('[data-testid="workers"]');
  const panel = document.querySelector('[data-testid="worker-actions-panel"]');
  const lines = panel && panel.querySelector('[data-testid="worker-action-lines"]');
  if (!live || !lines || typeof MutationObserver === 'undefined') return;
  const keysIn = (root) => Array.from(root.querySelectorAll('[data-drain-key]'), (el) => el.getAttribute('data-drain-key')).join(' ');
  let shown = keysIn(lines);
  let asked = 0;
  new MutationObserver(async () => {
    const wanted = keysIn(live);
    if (wanted === shown) return;
    shown = wanted;
    const seq = ++asked;
    try {
      const response = await fetch(panel.getAttribute('data-actions-src'), { credentials: 'same-origin', headers: { Accept: 'text/html' } });
      if (!response.ok) throw new Error(String(response.status));
      const fresh = document.createElement('template');
      fresh.innerHTML = await response.text();
      if (seq !== asked) return;
      const kept = new Map(Array.from(lines.querySelectorAll('[data-drain-key]'), (el) => [el.getAttribute('data-drain-key'), el]));
      for (const line of Array.from(fresh.content.querySelectorAll('[data-drain-key]'))) {
        const old = kept.get(line.getAttribute('data-drain-key'));
        if (old) line.replaceWith(old);
      }
      lines.replaceChildren(fresh.content);
    } catch (error) {
      // Asked again at the next change of the region.
      if (seq === asked) shown = undefined;
    }
  }).observe(live, { childList: true, subtree: true });
})();
`;

/** The panel's fragment and script, only with --allow-actions. */
export function registerWorkerActions(app: Hono<DashboardEnv>, context: DashboardContext): void {
  if (!context.allowActions) return;
  app.get(FRAGMENT, async (c) => c.html(await actionLines(context)));
  app.get(SCRIPT, (c) => c.body(WORKERS_PAGE_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' }));
}
