/**
 * The dashboard's actions: cancel, hold, release, restart and change the
 * priority of a run; drain and undrain a worker. They exist only when the
 * dashboard was started with --allow-actions: without it no route is
 * registered (a POST is a 404) and no form is rendered. Each form is a
 * confirm step in the page (a disclosure whose confirm button posts), and
 * each POST must come from this dashboard's own pages: it carries a token
 * made per server, given only in those pages' forms, and a browser's
 * Sec-Fetch-Site and Origin must not name another site. What fitq did is
 * shown with the lines the CLI prints (run-actions.ts).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { isValidName } from '../model/names.js';
import { ENDED_STATUSES, type RunRecord } from '../model/run-record.js';
import { MAX_PRIORITY } from '../model/run-checks.js';
import type { DashboardContext } from './context.js';
import type { DashboardEnv } from './env.js';
import type { Html } from './layout.js';
import { dashboardPage } from './page.js';
import { RUN_ACTIONS, runAction, WORKER_ACTIONS, workerAction, type ActionOutcome, type RunAction, type WorkerAction } from './run-actions.js';
import { runHref, runsHref } from './run-links.js';

/** The form field holding the per-server token. */
export const ACTION_TOKEN_FIELD = 'action_token';

const tokens = new WeakMap<DashboardContext, string>();

/** The token this server's forms carry (made once per dashboard). */
function actionToken(context: DashboardContext): string {
  let token = tokens.get(context);
  if (token === undefined) {
    token = randomBytes(24).toString('base64url');
    tokens.set(context, token);
  }
  return token;
}

/** What each run action says on its button, and which statuses it applies to. */
const RUN_ACTION_FORMS: Record<Exclude<RunAction, 'priority'>, { label: string; confirm: string; statuses: readonly string[] }> = {
  cancel: { label: 'Cancel', confirm: 'Cancel this run', statuses: ['staged', 'held', 'running'] },
  hold: { label: 'Hold', confirm: 'Hold this run', statuses: ['staged'] },
  release: { label: 'Release', confirm: 'Release this run', statuses: ['held'] },
  restart: { label: 'Restart', confirm: 'Restart this run', statuses: ENDED_STATUSES },
};

function tokenField(context: DashboardContext): Html {
  return html`<input type="hidden" name="${ACTION_TOKEN_FIELD}" value="${actionToken(context)}">`;
}

/** One action behind a confirm step: the summary opens it, the button in it posts. */
function confirmForm(context: DashboardContext, action: string, testid: string, summary: string, body: Html, confirm: string, danger: boolean): Html {
  return html`<details class="action" data-testid="action-${testid}">
  <summary class="action-open${danger ? ' danger' : ''}">${summary}</summary>
  <form method="post" action="${action}" class="action-confirm">
    ${tokenField(context)}${body}
    <button type="submit" class="${danger ? 'danger' : ''}" data-testid="confirm-${testid}">${confirm}</button>
  </form>
</details>`;
}

/** The actions that apply to a run as it is now; nothing without --allow-actions. */
export function runActionForms(context: DashboardContext, queue: string, run: RunRecord): Html | '' {
  if (!context.allowActions) return '';
  const base = `/actions/runs/${encodeURIComponent(queue)}/${encodeURIComponent(run.id)}`;
  const forms: Html[] = [];
  for (const [name, form] of Object.entries(RUN_ACTION_FORMS)) {
    if (!form.statuses.includes(run.status)) continue;
    const note = html`<p>${form.confirm} (${run.id})?</p>`;
    forms.push(confirmForm(context, `${base}/${name}`, name, `${form.label}…`, note, `${form.label} run`, name === 'cancel'));
  }
  if (run.status === 'staged' || run.status === 'held') {
    const input = html`<label>New priority (higher starts first) <input type="number" name="priority" required min="${-MAX_PRIORITY}" max="${MAX_PRIORITY}" step="1" value="${run.priority}" data-testid="priority-input"></label>`;
    forms.push(confirmForm(context, `${base}/priority`, 'priority', 'Priority…', input, 'Change priority', false));
  }
  return forms.length === 0 ? '' : html`<div class="actions" data-testid="run-actions">${forms}</div>`;
}

/** The page a worker action's form is on: its result page leads back there. */
export type WorkerActionPage = 'runs' | 'workers';
const WORKER_ACTION_PAGE_FIELD = 'from';

function workerActionBack(page: WorkerActionPage, queue: string, worker: string): { href: string; label: string } {
  return page === 'workers' ? { href: '/workers', label: 'Back to the workers' } : { href: runsHref({ queue, worker }), label: `Back to the runs of ${worker}` };
}

/** Drain or undrain a live worker; nothing without --allow-actions. `page`: the page the form is on (the runs page filtered on the worker, or the workers page). */
export function workerActionForms(context: DashboardContext, queue: string, worker: string, drained: boolean, page: WorkerActionPage = 'runs'): Html | '' {
  if (!context.allowActions) return '';
  const action: WorkerAction = drained ? 'undrain' : 'drain';
  const note = drained
    ? html`<p>Let ${worker} claim runs again?</p>`
    : html`<p>Drain ${worker}? It finishes what it runs and claims nothing more.</p>`;
  const body = html`${note}<input type="hidden" name="${WORKER_ACTION_PAGE_FIELD}" value="${page}">`;
  const href = `/actions/workers/${encodeURIComponent(queue)}/${encodeURIComponent(worker)}/${action}`;
  return html`<div class="actions" data-testid="worker-actions">${confirmForm(context, href, `${action}-${worker}`, drained ? 'Undrain…' : 'Drain…', body, drained ? 'Undrain worker' : 'Drain worker', !drained)}</div>`;
}

/** Same text in constant time. */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why a POST is not taken as this dashboard's own, or undefined. A browser
 * says where a request comes from (Sec-Fetch-Site; Origin, which it sends
 * as "null" under the dashboard's no-referrer policy); the token is what a
 * page of another site can never know.
 */
function foreignRequest(c: Context, context: DashboardContext, form: Record<string, unknown>): string | undefined {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a request from another site (Sec-Fetch-Site: ${site})`;
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== 'null' && origin !== new URL(c.req.url).origin) return `a request from another origin (${origin})`;
  const token = form[ACTION_TOKEN_FIELD];
  if (typeof token !== 'string' || !sameText(token, actionToken(context))) return "a form without this dashboard's token (reload the page)";
  return undefined;
}

function resultPage(c: Context, context: DashboardContext, title: string, outcome: ActionOutcome, back: { href: string; label: string }, status: 200 | 400 | 403 | 409) {
  const body = html`<h1>${title}</h1>
<section class="panel">
  <ul class="action-result" data-testid="action-result" data-ok="${String(outcome.ok)}">${outcome.lines.map((line) => html`<li class="wrap-anywhere">${line}</li>`)}</ul>
  <p><a href="${back.href}" data-testid="action-back">${back.label}</a></p>
</section>`;
  return c.html(dashboardPage(context, { title, active: 'runs', body }), status);
}

/** Registers the POST routes, only with --allow-actions. */
export function registerActions(app: Hono<DashboardEnv>, context: DashboardContext): void {
  if (!context.allowActions) return;

  app.post('/actions/runs/:queue/:id/:action', async (c) => {
    const { queue, id, action } = c.req.param();
    const client = context.clients.get(queue);
    if (!client || !isValidName(id) || !(RUN_ACTIONS as readonly string[]).includes(action)) return c.notFound();
    const form = await c.req.parseBody();
    const back = { href: runHref(queue, id), label: `Back to run ${id}` };
    const foreign = foreignRequest(c, context, form);
    if (foreign !== undefined) return resultPage(c, context, 'Refused', { ok: false, lines: [`Refused ${foreign}: nothing was done.`] }, back, 403);
    const value = typeof form.priority === 'string' ? form.priority : undefined;
    const outcome = await runAction(client, action as RunAction, id, value);
    return resultPage(c, context, `${action[0]!.toUpperCase()}${action.slice(1)}: run ${id}`, outcome, back, outcome.ok ? 200 : 409);
  });

  app.post('/actions/workers/:queue/:name/:action', async (c) => {
    const { queue, name, action } = c.req.param();
    const client = context.clients.get(queue);
    if (!client || !isValidName(name) || !(WORKER_ACTIONS as readonly string[]).includes(action)) return c.notFound();
    const form = await c.req.parseBody();
    const back = workerActionBack(form[WORKER_ACTION_PAGE_FIELD] === 'workers' ? 'workers' : 'runs', queue, name);
    const foreign = foreignRequest(c, context, form);
    if (foreign !== undefined) return resultPage(c, context, 'Refused', { ok: false, lines: [`Refused ${foreign}: nothing was done.`] }, back, 403);
    const outcome = await workerAction(client, action as WorkerAction, name);
    return resultPage(c, context, `${action[0]!.toUpperCase()}${action.slice(1)}: worker ${name}`, outcome, back, outcome.ok ? 200 : 409);
  });
}
