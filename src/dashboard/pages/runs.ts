/**
 * Runs: a table per namespace, filtered by status, label, array, worker and
 * free text, with fitq's why-waiting column (the WHY text `fitq runs`
 * prints), a page of at most MAX_ROWS at a time with links to the older and
 * newer ones. The tables are a live region: the live script re-fetches
 * /fragments/runs (same query, same page) when runs or workers change.
 */
import type { Context, Hono } from 'hono';
import { html, raw } from 'hono/html';
import { UsageError } from '../../errors.js';
import { quote } from '../../text/quote.js';
import { RUN_STATUSES } from '../../model/run-record.js';
import { workerState } from '../../model/worker-record.js';
import { workerActionForms } from '../actions.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import { cachedFragment } from '../fragment-cache.js';
import type { LiveTopic } from '../../live/feed.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';
import type { ArrayLine } from '../../present/array-lines.js';
import { listRunRows, MAX_ROWS, NO_LISTING, parseRunQuery, runQueryParams, type RunListing, type RunQuery, type RunRow } from '../run-list.js';
import { runHref, runsHref } from '../run-links.js';
import { registerRunsAssets, RUNS_STYLESHEET } from './runs-style.js';

/** What the why column and the table depend on. */
const TOPICS: readonly LiveTopic[] = ['runs', 'workers'];

/** The namespaces a query shows; an unknown one is a UsageError naming those there are. */
function queuesOf(context: DashboardContext, query: RunQuery): string[] {
  const queues = [...context.clients.keys()];
  // A page position is a namespace's own staging number.
  if (query.queue === undefined && queues.length > 1 && (query.before !== undefined || query.after !== undefined)) {
    throw new UsageError(`before and after page through one namespace: give queue too (this dashboard shows ${queues.join(', ')})`);
  }
  if (query.queue === undefined) return queues;
  if (!context.clients.has(query.queue)) throw new UsageError(`unknown namespace ${quote(query.queue)}: this dashboard shows ${queues.join(', ')}`);
  return [query.queue];
}

function filterForm(context: DashboardContext, query: RunQuery, raw: URLSearchParams): Html {
  const value = (name: string) => raw.get(name) ?? '';
  const queues = [...context.clients.keys()];
  // One field per label given (all must match), at least one.
  const given = raw.getAll('label').filter((label) => label.trim() !== '');
  const labels = given.length > 0 ? given : [''];
  return html`<form class="panel filters" method="get" action="${runsHref({})}" data-testid="run-filters">
  ${queues.length > 1
    ? html`<label>Namespace <select name="queue" data-testid="filter-queue"><option value="">all</option>${queues.map((queue) => html`<option value="${queue}"${query.queue === queue ? html` selected` : ''}>${queue}</option>`)}</select></label>`
    : ''}
  <fieldset class="statuses"><legend>Status</legend>
    ${RUN_STATUSES.map((status) => html`<label class="check" data-status="${status}"><input type="checkbox" name="status" value="${status}" data-testid="filter-status-${status}"${query.statuses.includes(status) ? html` checked` : ''}> ${status}</label>`)}
  </fieldset>
  ${labels.map((label, i) => html`<label>Label <input name="label" placeholder="key=value" value="${label}" data-testid="filter-label${i === 0 ? '' : `-${i}`}"></label>`)}
  <label>Array <input name="array" placeholder="array id" value="${value('array')}" data-testid="filter-array"></label>
  <label>Worker <input name="worker" placeholder="worker name" value="${value('worker')}" data-testid="filter-worker"></label>
  <label>User <input name="user" placeholder="who staged" value="${value('user')}" data-testid="filter-user"></label>
  <label class="grow">Search <input type="search" name="q" placeholder="id, command or label" value="${value('q')}" data-testid="filter-text"></label>
  <label class="check expand"><input type="checkbox" name="expand" value="1" data-testid="filter-expand"${query.expand ? html` checked` : ''}> every run its own row</label>
  <div class="filter-buttons"><button type="submit" data-testid="filter-apply">Filter</button> <a href="${runsHref({})}" data-testid="filter-clear">Clear</a></div>
</form>`;
}

/** An array's row: its runs counted by status, its id a link to the page of its runs (the other filters kept). */
function arrayRow(queue: string, query: RunQuery, several: boolean, array: ArrayLine, { cells }: RunRow): Html {
  const id = array.array;
  const href = runsHref({ ...query, ...(several ? { queue } : {}), array: id, before: undefined, after: undefined });
  return html`<tr data-testid="array-row-${id}" data-status="array">
  <td class="mono"><a href="${href}" title="list the runs of array ${id}" data-testid="array-link-${id}">${cells.id}</a></td>
  <td data-testid="array-status-${id}">${cells.status}</td>
  <td class="mono opt">${cells.user}</td>
  <td class="mono opt">${cells.requires}</td>
  <td class="mono cmd"><div class="clip" title="${cells.command}" data-testid="command-${id}">${cells.command}</div></td>
  <td class="mono opt"><div class="clip labels" title="${cells.labels}" data-testid="labels-${id}">${cells.labels}</div></td>
  <td class="mono worker">${cells.worker}</td>
  <td class="num opt">${cells.duration}</td>
  <td class="why wrap-anywhere" data-testid="why-${id}">${cells.why}</td>
</tr>`;
}

function runRow(queue: string, { run, cells }: RunRow): Html {
  return html`<tr data-testid="run-row-${run.id}" data-status="${run.status}">
  <td class="mono"><a href="${runHref(queue, run.id)}" data-testid="run-link-${run.id}">${cells.id}</a></td>
  <td><span class="pill" data-testid="status-${run.id}">${cells.status}</span></td>
  <td class="mono opt" data-testid="user-${run.id}">${cells.user}</td>
  <td class="mono opt">${cells.requires}</td>
  <td class="mono cmd"><div class="clip" title="${cells.command}" data-testid="command-${run.id}">${cells.command}</div></td>
  <td class="mono opt"><div class="clip labels" title="${cells.labels}" data-testid="labels-${run.id}">${cells.labels}</div></td>
  <td class="mono worker">${cells.worker}</td>
  <td class="num opt">${cells.duration}</td>
  <td class="why wrap-anywhere" data-testid="why-${run.id}">${cells.why}</td>
</tr>`;
}

/** The columns of `fitq runs` that fit beside the why column at 1280 px (the run's page shows the rest). */
const HEADERS = ['id', 'status', 'user', 'requires', 'command', 'labels', 'worker', 'duration', 'why'];
/** Left out on a phone. */
const OPTIONAL = new Set(['user', 'requires', 'labels', 'duration']);

/**
 * The worker the page is filtered on, in each namespace where it is live,
 * with its drain form (with --allow-actions). Outside the live region: a
 * refresh would close a confirm step a user opened.
 */
async function workerPanels(context: DashboardContext, queues: readonly string[], name: string | undefined): Promise<Html | ''> {
  if (name === undefined) return '';
  const found = await Promise.all(queues.map(async (queue) => ({ queue, worker: (await context.clients.get(queue)!.listWorkers()).find((worker) => worker.name === name) })));
  return html`${found.map(({ queue, worker }) =>
    worker
      ? html`<div class="panel worker-line" data-testid="worker-state-${worker.name}">Worker <b class="mono">${worker.name}</b>${queues.length > 1 ? html` of ${queue}` : ''}: ${workerState(worker)} ${workerActionForms(context, queue, worker.name, worker.drainedAt !== undefined)}</div>`
      : '',
  )}`;
}

/** The query of another page of one namespace's runs (the namespace named when the dashboard shows several), filters kept. */
function pageHref(query: RunQuery, queue: string, several: boolean, position: { before?: number; after?: number }): string {
  const filters: RunQuery = { ...query, ...(several ? { queue } : {}) };
  delete filters.before;
  delete filters.after;
  return runsHref({ ...filters, ...position });
}

/** Which runs of how many the page shows (counted when nothing is selected), and links to the pages around it. */
function pager(queue: string, query: RunQuery, several: boolean, listing: RunListing): Html {
  const { rows, shown, first, last, total, older, newer, hasOlder, hasNewer } = listing;
  const link = (name: string, label: string, position: { before?: number; after?: number }) =>
    html`<a href="${pageHref(query, queue, several, position)}" data-testid="page-${name}-${queue}">${label}</a>`;
  const counted = total !== undefined && older !== undefined;
  const range = rows.length === 0
    ? `none here${total === undefined ? '' : `, ${total} in all`}`
    : counted
      ? `runs ${older + 1}–${older + shown} of ${total}`
      : `${shown} matching run${shown === 1 ? '' : 's'} here`;
  // Counted, the next page of at most MAX_ROWS newer runs is the newest (the live view, no position).
  const newerPosition = newer !== undefined && newer <= MAX_ROWS ? {} : last === undefined ? {} : { after: last };
  return html`<nav class="pager" aria-label="pages of ${queue}'s runs" data-testid="pager-${queue}">
  ${hasOlder && (older === undefined || older > MAX_ROWS) ? link('oldest', '« oldest', { after: 0 }) : ''}
  ${hasOlder && first !== undefined ? link('older', '‹ older', { before: first }) : ''}
  <span class="sub" data-testid="run-range-${queue}">${range}</span>
  ${hasNewer ? link('newer', 'newer ›', newerPosition) : ''}
  ${hasNewer && (newer === undefined || newer > MAX_ROWS) ? link('newest', 'newest »', {}) : ''}
</nav>`;
}

/** One namespace's runs: a page of its table, and links to the others. */
function namespaceRuns(queue: string, query: RunQuery, several: boolean, listing: RunListing): Html {
  const { rows, total, hasOlder, hasNewer } = listing;
  const none = total === 0 || (total === undefined && !hasOlder && !hasNewer);
  const table = rows.length === 0
    ? html`<p class="empty" data-testid="no-runs">${none ? 'No runs match.' : 'No runs on this page.'}</p>`
    : html`<div class="table-wrap"><table class="runs-table">
  <thead><tr>${HEADERS.map((name) => html`<th class="${[OPTIONAL.has(name) ? 'opt' : '', name === 'duration' ? 'num' : ''].filter(Boolean).join(' ')}">${name}</th>`)}</tr></thead>
  <tbody>${rows.map((row) => (row.array ? arrayRow(queue, query, several, row.array, row) : runRow(queue, row)))}</tbody>
</table></div>`;
  return html`<section class="panel" data-testid="runs-${queue}">
  <div class="panel-head"><h2>${queue}</h2>${total === undefined ? '' : html`<span class="sub" data-testid="run-count-${queue}">${total} run${total === 1 ? '' : 's'}</span>`}</div>
  ${none ? '' : pager(queue, query, several, listing)}${table}
</section>`;
}

/**
 * Every namespace's table. An array is one namespace's: where it is
 * unknown that namespace has no run of it; unknown in all, it is refused.
 */
async function runsFragment(context: DashboardContext, query: RunQuery): Promise<Html> {
  // The view with no filter, the one left open, is read once per change for every page showing it (fragment-cache.ts).
  if (runQueryParams(query).toString() === '') return raw(await cachedFragment(context, 'runs', TOPICS, async () => String(await readRunsFragment(context, query))));
  return readRunsFragment(context, query);
}

async function readRunsFragment(context: DashboardContext, query: RunQuery): Promise<Html> {
  const queues = queuesOf(context, query);
  const listings = await Promise.all(queues.map((queue) => listRunRows(context.clients.get(queue)!, query).catch((error: unknown) => {
    if (queues.length > 1 && error instanceof UsageError && error.message.startsWith('unknown array ')) return error;
    throw error;
  })));
  const unknown = listings.find((listing): listing is UsageError => listing instanceof UsageError);
  if (unknown && listings.every((listing) => listing instanceof UsageError)) throw unknown;
  const several = context.clients.size > 1;
  return html`${listings.map((listing, i) => namespaceRuns(queues[i]!, query, several, listing instanceof UsageError ? NO_LISTING : listing))}`;
}

function filterError(error: UsageError): Html {
  return html`<p class="panel error" data-testid="filter-error">${error.message}</p>`;
}

/** The page's answer to a bad filter: 400 with the message; anything else stands. */
function refused(error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  throw error;
}

async function runsPage(c: Context<DashboardEnv>, context: DashboardContext) {
  const raw = new URL(c.req.url).searchParams;
  let query: RunQuery = { statuses: [], labels: {} };
  let body: Html;
  let status: 200 | 400 = 200;
  try {
    query = parseRunQuery(raw);
    const search = runQueryParams(query).toString();
    body = html`${await workerPanels(context, queuesOf(context, query), query.worker)}<div data-live="/fragments/runs${search === '' ? '' : `?${search}`}" data-live-topics="${TOPICS.join(' ')}" data-testid="runs-live">${await runsFragment(context, query)}</div>`;
  } catch (error) {
    body = filterError(refused(error));
    status = 400;
  }
  return c.html(
    dashboardPage(context, {
      title: 'Runs',
      active: 'runs',
      body: html`${RUNS_STYLESHEET}<h1>Runs</h1><p class="lede">Why a staged run waits is fitq's own explanation, as <code>fitq runs</code> prints it.</p>${filterForm(context, query, raw)}${body}`,
    }),
    status,
  );
}

export function registerRuns(app: Hono<DashboardEnv>, context: DashboardContext): void {
  registerRunsAssets(app);
  app.get('/runs', (c) => runsPage(c, context));
  app.get('/fragments/runs', async (c) => {
    try {
      return c.html(await runsFragment(context, parseRunQuery(new URL(c.req.url).searchParams)));
    } catch (error) {
      return c.html(filterError(refused(error)), 400);
    }
  });
}
