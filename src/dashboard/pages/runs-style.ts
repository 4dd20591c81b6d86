/**
 * What the runs and run pages add to the dashboard's assets: their
 * stylesheet (/assets/runs.css) and the run page's script
 * (/assets/run-page.js), plain JavaScript served from memory like the rest.
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { DashboardEnv } from '../env.js';

export const RUNS_STYLESHEET = html`<link rel="stylesheet" href="/assets/runs.css">`;
export const RUN_PAGE_SCRIPT = html`<script src="/assets/run-page.js" defer></script>`;

const RUNS_CSS = String.raw`
.pager { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: baseline; margin: 0 0 .6rem; }
.filters { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: flex-end; margin-bottom: 1rem; }
.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); gap: .15rem; }
.filters label.grow { flex: 1 1 12rem; }
.filters input, .filters select, .action input { font: inherit; font-size: .9rem; padding: .3rem .45rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; color: var(--ink); min-width: 0; }
.filters .statuses { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .15rem .6rem; flex-basis: 100%; }
.filters .statuses legend { font-size: .8rem; color: var(--muted); padding: 0; margin-bottom: .15rem; }
.filters label.check { flex-direction: row; align-items: center; gap: .25rem; font-size: .85rem; color: var(--ink); }
.filters label.check::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--c, var(--muted)); }
.filters label.check.expand::before { content: none; }
.filter-buttons { display: flex; gap: .6rem; align-items: center; }
button { font: inherit; font-size: .9rem; padding: .32rem .8rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.danger { background: var(--status-failed); border-color: var(--status-failed); }
.error { border-color: #f3b4b4; background: #fff5f5; color: #a12828; overflow-wrap: anywhere; }
.runs-table td.why { min-width: 16rem; color: var(--ink); }
.runs-table td.cmd .clip { max-width: 16rem; }
.runs-table td .clip.labels { max-width: 10rem; }
.runs-table tr td:first-child { white-space: nowrap; }
.worker-line { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: 1rem; font-size: .9rem; }
.worker-action-line { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: .3rem 0; font-size: .9rem; min-width: 0; }
.worker-actions { margin-bottom: 1rem; }
.worker-actions h2 { margin-top: 0; }
.run-head { display: flex; flex-wrap: wrap; gap: .6rem; align-items: baseline; margin: -.4rem 0 1rem; }
.run-section { margin-top: 1rem; }
.run-grid { grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); align-items: start; }
.record { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .9rem; margin: 0; font-size: .9rem; }
.record dt { color: var(--muted); }
.record dd { margin: 0; font-family: var(--mono); font-size: .86rem; min-width: 0; max-height: 9.5em; overflow: auto; }
.related, .attempts { margin: 0 0 .6rem; padding-left: 1.2rem; font-size: .9rem; }
.related li, .attempts li { margin: .15rem 0; }
.log-tail { margin: 0; max-height: 28rem; overflow: auto; background: #0f1720; color: #d8dee9; border-radius: 8px; padding: .6rem .75rem; font-family: var(--mono); font-size: .82rem; line-height: 1.45; white-space: pre-wrap; overflow-wrap: anywhere; }
.log-tail .stderr { color: #f59e9e; }
.log-tail .note { color: #f0b429; }
.log-tail:empty { display: none; }
[data-testid="log-state"][data-state="following"] { color: var(--status-running); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-start; }
.action { border: 1px solid var(--line); border-radius: 8px; padding: .3rem .6rem; background: #fafbfc; }
.action[open] { flex-basis: 100%; }
.action summary { cursor: pointer; font-weight: 600; font-size: .9rem; color: var(--accent); }
.action summary.danger { color: var(--status-failed); }
.action-confirm { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0 .2rem; }
.action-confirm p { margin: 0; flex-basis: 100%; font-size: .88rem; }
.action-confirm label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
.action-result { margin: 0 0 .75rem; padding-left: 1.2rem; }
@media (max-width: 640px) {
  /* Each run a small card: id and status, then command, worker and why on lines of their own. */
  .runs-table thead, .runs-table .opt { display: none; }
  .runs-table tr { display: grid; grid-template-columns: 1fr auto; gap: .1rem .5rem; padding: .45rem 0; border-bottom: 1px solid var(--line); }
  .runs-table tr:last-child { border-bottom: 0; }
  .runs-table td { border: 0; padding: .05rem 0; min-width: 0; }
  .runs-table td.cmd, .runs-table td.why, .runs-table td.worker { grid-column: 1 / -1; }
  .runs-table td.why { min-width: 0; color: var(--muted); }
  .runs-table td.worker:empty, .runs-table td.why:empty { display: none; }
  .runs-table td.cmd .clip { max-width: 100%; }
  .record { grid-template-columns: 1fr; gap: 0; }
  .record dd { margin-bottom: .35rem; }
  .filters label { flex: 1 1 45%; }
}
`;

/**
 * The run page's script. Follows the run's output: server-sent events from
 * the tail's data-log-src (each line added as text, never as markup), the
 * newest MAX_LINES kept, scrolled to the end while the reader is there.
 * And fetches the actions panel again when the live part of the page shows
 * the run in another status (not on every refresh: that would close a
 * confirm step a user opened).
 */
const RUN_PAGE_JS = String.raw`(() => {
  'use strict';
  const MAX_LINES = 2000;
  const tail = document.querySelector('[data-testid="log-tail"]');
  const state = document.querySelector('[data-testid="log-state"]');
  const src = tail && tail.getAttribute('data-log-src');

  const live = document.querySelector('[data-testid="run-live"]');
  const actions = document.querySelector('[data-testid="run-actions-panel"]');
  if (live && actions && typeof MutationObserver !== 'undefined') {
    new MutationObserver(async () => {
      const status = live.querySelector('[data-testid="run-status"]');
      const now = status && status.textContent;
      if (!now || now === actions.getAttribute('data-run-status')) return;
      actions.setAttribute('data-run-status', now);
      try {
        const response = await fetch(actions.getAttribute('data-actions-src'), { credentials: 'same-origin', headers: { Accept: 'text/html' } });
        if (!response.ok) return;
        const html = await response.text();
        actions.setAttribute('data-run-status', response.headers.get('X-Run-Status') || now);
        actions.innerHTML = html;
      } catch (error) {
        actions.removeAttribute('data-run-status');
      }
    }).observe(live, { childList: true, subtree: true });
  }

  if (!src || typeof EventSource === 'undefined') return;

  function setState(name, text) {
    if (!state) return;
    state.dataset.state = name;
    state.textContent = text;
  }
  function atEnd() {
    return tail.scrollHeight - tail.scrollTop - tail.clientHeight < 40;
  }
  function add(kind, text) {
    const follow = atEnd();
    const empty = document.querySelector('[data-testid="log-empty"]');
    if (empty) empty.remove();
    const line = document.createElement('span');
    line.className = 'line ' + kind;
    line.textContent = text + '\n';
    tail.appendChild(line);
    while (tail.childElementCount > MAX_LINES) tail.firstElementChild.remove();
    if (follow) tail.scrollTop = tail.scrollHeight;
  }
  function data(event) {
    try {
      return JSON.parse(event.data);
    } catch (error) {
      return {};
    }
  }

  tail.scrollTop = tail.scrollHeight;
  const source = new EventSource(src);
  source.addEventListener('open', () => setState('following', 'following'));
  source.addEventListener('line', (event) => {
    const entry = data(event);
    add(entry.stream === 'stderr' ? 'stderr' : 'stdout', String(entry.line));
  });
  source.addEventListener('restaged', (event) => add('note', String(data(event).text)));
  source.addEventListener('end', (event) => {
    source.close();
    setState('ended', String(data(event).text));
  });
  source.addEventListener('failed', (event) => {
    source.close();
    setState('error', String(data(event).text));
  });
  source.addEventListener('error', () => {
    // Closed: the dashboard answered with a refusal (too many streams open), which a browser does not ask again.
    if (source.readyState === EventSource.CLOSED) setState('error', 'not following: stream refused (reload to try again)');
    else setState('reconnecting', 'reconnecting…');
  });
})();
`;

const ASSETS: Record<string, { body: string; type: string }> = {
  'runs.css': { body: RUNS_CSS, type: 'text/css; charset=utf-8' },
  'run-page.js': { body: RUN_PAGE_JS, type: 'text/javascript; charset=utf-8' },
};

export function registerRunsAssets(app: Hono<DashboardEnv>): void {
  for (const [name, { body, type }] of Object.entries(ASSETS)) {
    app.get(`/assets/${name}`, (c) => c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache' }));
  }
}
