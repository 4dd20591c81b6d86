/**
 * What Bull Board is served of a run, through the real `fitq dashboard`
 * process: every response of its API that a reader can ask for (the queues
 * list in every state, a job, its logs and flow, and the rest) names the
 * run's environment variables but never their values, nor the run's
 * signature or its notification URL, which may each hold a secret.
 */
import { appRoutes } from '@bull-board/api/dist/routes.js';
import { describe, expect, it } from 'vitest';
import { boardQueueName } from '../../src/dashboard/bull-board.js';
import { REDACTED } from '../../src/dashboard/job-data-redaction.js';
import { startDashboard } from '../support/browser.js';
import { connectClient, fitq, newQueue, readRunData } from '../support/fitq.js';

const SECRET_VALUE = 'hunter2-e7c1';
const OTHER_VALUE = 'plain-b4d0';
const HOOK_SECRET = 'T0KEN-9a8b';

interface BoardJob {
  id: string;
  data: Record<string, unknown>;
}

describe('Bull Board in the dashboard: run data', () => {
  it('shows env names with their values replaced, and no signature or notification URL, in every API response', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const staged = await fitq(
      ['stage', '--env', `SECRETVAR=${SECRET_VALUE}`, `OTHER=${OTHER_VALUE}`, '--notify', `https://hooks.example/services/${HOOK_SECRET}`, '-r', 'nowhere=1', '--', 'echo', 'hi'],
      { queue, env: { FITQ_SECRET: 'shared-secret-31' } },
    );
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const stored = await readRunData(client, id);
    const signature = String(stored.signature);
    expect(signature.length).toBeGreaterThan(20);
    expect((stored.env as Record<string, string>).SECRETVAR).toBe(SECRET_VALUE);

    const dashboard = await startDashboard(queue);
    const board = boardQueueName(queue, client.keys.queue.name);
    const params: Record<string, string> = { queueName: encodeURIComponent(board), jobId: id };
    const reads = appRoutes.api
      .flatMap(({ method, route }) => ([method].flat().includes('get') ? [route].flat() : []))
      .filter((route) => !/:(queueStatus|schedulerId)\b/.test(route))
      .map((route) => route.replace(/:(\w+)/g, (_, name: string) => params[name]!));
    expect(reads).toContain(`/api/queues/${params.queueName}/${id}`);
    const listings = ['latest', 'prioritized', 'waiting', 'active', 'completed', 'failed'].map(
      (status) => `/api/queues?activeQueue=${params.queueName}&status=${status}&page=1&jobsPerPage=50`,
    );
    for (const path of [...reads, ...listings]) {
      const response = await fetch(`${dashboard.origin}/bull${path}`);
      const body = await response.text();
      expect(body, path).not.toContain(SECRET_VALUE);
      expect(body, path).not.toContain(OTHER_VALUE);
      expect(body, path).not.toContain(signature);
      expect(body, path).not.toContain(HOOK_SECRET);
    }

    // The names stay, and what the run is: its command, demands, labels.
    const expected = { SECRETVAR: REDACTED, OTHER: REDACTED };
    const detail = (await (await fetch(`${dashboard.origin}/bull/api/queues/${params.queueName}/${id}`)).json()) as { job: BoardJob };
    expect(detail.job.data.env).toEqual(expected);
    expect(detail.job.data.signature).toBe(REDACTED);
    expect(detail.job.data.notify).toBe(REDACTED);
    expect(detail.job.data.command).toEqual(['echo', 'hi']);
    expect(detail.job.data.resources).toBe(stored.resources);
    const listed = (await (await fetch(`${dashboard.origin}/bull${listings[1]}`)).json()) as { queues: { name: string; jobs: BoardJob[] }[] };
    const job = listed.queues.find((entry) => entry.name === board)!.jobs.find((entry) => entry.id === id)!;
    expect(job.data.env).toEqual(expected);
    expect(job.data.signature).toBe(REDACTED);

    // The run itself is untouched: the worker still gets the values, signed.
    const after = await readRunData(client, id);
    expect(after.env).toEqual({ SECRETVAR: SECRET_VALUE, OTHER: OTHER_VALUE });
    expect(after.signature).toBe(signature);
  });
});
