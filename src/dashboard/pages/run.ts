/**
 * A run's page: its record (as `fitq runs show` gives it; env by names
 * only, never values), the runs it waits for and those waiting for it with
 * their states, its attempts, the actions that apply (with
 * --allow-actions), and the tail of its output, followed live: the page's
 * script reads /runs/QUEUE/ID/log, server-sent events fed by the
 * namespace's shared reader (log-followers.ts), from the last entry the
 * page shows.
 */
import { preemptingText } from '../../model/preemption.js';
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { describeAttempt, runDetailRows } from '../../present/run-details.js';
import { describeEnd, restagedNote } from '../../present/run-end.js';
import { UsageError } from '../../errors.js';
import type { FitqClient } from '../../client.js';
import type { NamespaceLogReader } from '../log-followers.js';
import { withStreamSlot } from '../stream-slots.js';
import type { LogEntry } from '../../model/logs.js';
import { isValidName } from '../../model/names.js';
import { oneLine } from '../../text/quote.js';
import { isEnded, type RunRecord } from '../../model/run-record.js';
import { runActionForms, workerActionForms } from '../actions.js';
import type { DashboardContext } from '../context.js';
import type { DashboardEnv } from '../env.js';
import type { Html } from '../layout.js';
import { dashboardPage } from '../page.js';
import { loadRunDetail, TAIL_LINES, type RelatedRun, type RunDetail } from '../run-detail.js';
import { runHref, runsHref } from '../run-links.js';
import { RUNS_STYLESHEET, RUN_PAGE_SCRIPT } from './runs-style.js';

const DEPENDENCY_KINDS_SHOWN: Record<string, string> = {
  ok: 'after-ok: every one must complete',
  notok: 'after-notok: every one must end otherwise',
  end: 'after-end: every one must end',
  any: 'after-any: one must complete',
};

function relatedList(queue: string, runs: readonly RelatedRun[], testid: string): Html {
  return html`<ul class="related" data-testid="${testid}">${runs.map(({ id, status }) => html`<li data-testid="${testid}-${id}"><a class="mono" href="${runHref(queue, id)}">${id}</a> <span class="pill" data-status="${status}">${status}</span></li>`)}</ul>`;
}

/** The record, dependencies and attempts: the live part of the page. */
function runFragment(queue: string, detail: RunDetail): Html {
  const { run } = detail;
  const now = Date.now();
  return html`<div class="run-head"><span class="pill" data-status="${run.status}" data-testid="run-status">${run.status}</span>
  ${run.status === 'staged' || run.status === 'held' || preemptingText(run) ? html`<span class="why wrap-anywhere" data-testid="why-${run.id}">${oneLine(preemptingText(run) ?? run.reason ?? '')}</span>` : ''}</div>
<div class="grid run-grid">
<section class="panel">
  <h2>Record</h2>
  <dl class="record" data-testid="run-record">${runDetailRows(run, now).map(([label, value]) => html`<dt>${label}</dt><dd class="wrap-anywhere" data-testid="field-${label.replace(/ /g, '-')}">${oneLine(value)}</dd>`)}</dl>
</section>
<div>
<section class="panel">
  <h2>Dependencies</h2>
  ${detail.dependencies.length === 0
    ? html`<p class="empty" data-testid="no-dependencies">It waits for no run.</p>`
    : detail.dependencies.map((group, i) => html`<h3>${DEPENDENCY_KINDS_SHOWN[group.kind] ?? group.kind}</h3>${relatedList(queue, group.runs, `dependency-${i}`)}`)}
  <h3>Waiting for it</h3>
  ${detail.dependents.length === 0 ? html`<p class="empty">No run waits for it.</p>` : relatedList(queue, detail.dependents, 'dependents')}
</section>
<section class="panel">
  <h2>Attempts</h2>
  ${detail.attempts.length === 0
    ? html`<p class="empty" data-testid="no-attempts">It has not started yet.</p>`
    : html`<ol class="attempts" data-testid="attempts">${detail.attempts.map((attempt) => html`<li class="wrap-anywhere" data-testid="attempt-${attempt.attempt}" data-status="${attempt.status}">${oneLine(describeAttempt(attempt, now))}</li>`)}</ol>`}
</section>
</div>
</div>`;
}

function logTail(queue: string, detail: RunDetail): Html {
  const { run } = detail;
  const ended = isEnded(run);
  const src = `${runHref(queue, run.id)}/log?after=${encodeURIComponent(detail.logAfter)}`;
  return html`<section class="panel run-section">
  <div class="panel-head"><h2>Output</h2>
    <span class="sub" data-testid="log-state" data-state="${ended ? 'ended' : 'static'}">${ended ? describeEnd(run) : 'not following'}</span>
    ${detail.earlierLines > 0 ? html`<span class="sub">the last ${TAIL_LINES} lines; <code>fitq logs ${run.id}</code> prints all</span>` : ''}</div>
  <pre class="log-tail" data-testid="log-tail"${ended ? '' : html` data-log-src="${src}"`}>${detail.tail.map((entry) =>
    entry.kind === 'line' ? html`<span class="line ${entry.stream}">${entry.line}\n</span>` : html`<span class="line note">${restagedNote(entry.reason)}\n</span>`,
  )}</pre>
  ${detail.tail.length === 0 ? html`<p class="empty" data-testid="log-empty">No output${ended ? '' : ' yet'}.</p>` : ''}
</section>`;
}

/** The run a route names, or a 404 page. */
async function withRun(c: Context<DashboardEnv>, context: DashboardContext, show: (client: FitqClient, queue: string, detail: RunDetail) => Promise<Response>) {
  const { queue, id } = c.req.param() as { queue: string; id: string };
  const client = context.clients.get(queue);
  const missing = (message: string) =>
    c.html(dashboardPage(context, { title: 'No such run', active: 'runs', body: html`<h1>No such run</h1><p class="panel error" data-testid="run-error">${message}</p>` }), 404);
  if (!client) return missing(`This dashboard shows no namespace ${queue}.`);
  try {
    return await show(client, queue, await loadRunDetail(client, id));
  } catch (error) {
    if (error instanceof UsageError) return missing(error.message);
    throw error;
  }
}

/**
 * The actions that apply to the run, and to its worker while it is live;
 * nothing without --allow-actions. Not in the live part (a refresh would
 * close a confirm step a user opened): the page's script fetches it again
 * only when the run's status changes.
 */
async function actionsInner(context: DashboardContext, queue: string, run: RunRecord): Promise<Html> {
  const client = context.clients.get(queue)!;
  const worker = run.worker === undefined ? undefined : (await client.listWorkers()).find((candidate) => candidate.name === run.worker);
  return html`<h2>Actions</h2>${runActionForms(context, queue, run) || html`<p class="empty">None applies to a run ${run.status}.</p>`}
  ${worker ? html`<h3>Its worker, ${worker.name}</h3>${workerActionForms(context, queue, worker.name, worker.drainedAt !== undefined)}` : ''}`;
}

async function actionsPanel(context: DashboardContext, queue: string, run: RunRecord): Promise<Html | ''> {
  if (!context.allowActions) return '';
  const src = `/fragments/runs/${encodeURIComponent(queue)}/${encodeURIComponent(run.id)}/actions`;
  return html`<section class="panel run-section" data-testid="run-actions-panel" data-actions-src="${src}" data-run-status="${run.status}">${await actionsInner(context, queue, run)}</section>`;
}

/** SSE events for one log entry. */
function logEvent(entry: LogEntry): { event: string; data: string; id: string } {
  if (entry.kind === 'line') return { event: 'line', data: JSON.stringify({ stream: entry.stream, line: entry.line }), id: entry.id };
  if (entry.kind === 'restaged') return { event: 'restaged', data: JSON.stringify({ text: restagedNote(entry.reason) }), id: entry.id };
  return { event: 'mark', data: JSON.stringify({ status: entry.status }), id: entry.id };
}

const ENTRY_ID = /^(0|\d+-\d+)$/;

export function registerRun(app: Hono<DashboardEnv>, context: DashboardContext): void {
  app.get('/runs/:queue/:id', (c) =>
    withRun(c, context, async (_client, queue, detail) =>
      c.html(
        dashboardPage(context, {
          title: `Run ${detail.run.id}`,
          active: 'runs',
          body: html`${RUNS_STYLESHEET}${RUN_PAGE_SCRIPT}<h1>Run <span class="mono wrap-anywhere">${detail.run.id}</span></h1>
<p class="lede"><a href="${runsHref({ queue })}">All runs of ${queue}</a></p>
<div data-live="/fragments/runs/${encodeURIComponent(queue)}/${encodeURIComponent(detail.run.id)}" data-live-topics="runs workers" data-testid="run-live">${runFragment(queue, detail)}</div>
${await actionsPanel(context, queue, detail.run)}
${logTail(queue, detail)}`,
        }),
      ),
    ),
  );

  app.get('/fragments/runs/:queue/:id', (c) => withRun(c, context, async (_client, queue, detail) => c.html(runFragment(queue, detail))));
  if (context.allowActions) {
    app.get('/fragments/runs/:queue/:id/actions', (c) =>
      withRun(c, context, async (_client, queue, detail) => {
        c.header('X-Run-Status', detail.run.status);
        return c.html(await actionsInner(context, queue, detail.run));
      }),
    );
  }

  // The output after `after` (or the last event id the browser saw), until the run ends.
  app.get('/runs/:queue/:id/log', async (c) => {
    const { queue, id } = c.req.param();
    const reader = context.logs.get(queue);
    const after = c.req.header('last-event-id') ?? c.req.query('after') ?? '0';
    if (!reader || !isValidName(id)) return c.notFound();
    if (!ENTRY_ID.test(after)) return c.text(`invalid log position '${oneLine(after)}': expected an entry id like 1712345678901-0`, 400);
    return withStreamSlot(c, context.streams, (slot) => {
      c.header('Cache-Control', 'no-store');
      return streamSSE(c, async (stream) => {
        try {
          await sendLog(stream, reader, id, after);
        } finally {
          slot.release();
        }
      });
    });
  });
}

/** A run's output on one open stream, through the namespace's shared reader, until the run ends or the stream closes. */
async function sendLog(stream: SSEStreamingApi, reader: NamespaceLogReader, id: string, after: string): Promise<void> {
  let writes = Promise.resolve();
  const send = (event: { event: string; data: string; id?: string }) => {
    writes = writes.then(() => (stream.aborted ? undefined : stream.writeSSE(event)));
  };
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  stream.onAbort(() => done());
  const failed = (error: unknown) => send({ event: 'failed', data: JSON.stringify({ text: error instanceof Error ? oneLine(error.message) : 'the output could not be followed' }) });
  let stop: (() => void) | undefined;
  try {
    stop = await reader.follow(id, after, {
      entry: (entry) => send(logEvent(entry)),
      end: (run) => {
        send({ event: 'end', data: JSON.stringify({ status: run.status, text: describeEnd(run) }) });
        done();
      },
      failed: (error) => {
        failed(error);
        done();
      },
    });
    if (stream.aborted) done();
    await ended;
  } catch (error) {
    failed(error);
  } finally {
    stop?.();
  }
  await writes;
}
