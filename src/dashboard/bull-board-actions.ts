/**
 * Which of Bull Board's requests that change a queue the dashboard lets
 * through. Read-only: none. With actions allowed: only those fitq catches up
 * with (reconcileRuns, docs/redis-keys.md#bullmqs-actions, each driven
 * through BullMQ's API by test/bullmq/actions.test.ts); the rest would leave
 * fitq's index, a run's signature or what `fitq runs` says behind BullMQ, or
 * would seem to work and do nothing, so they are refused with why.
 */

/** A request of Bull Board's API as its handler hooks see it: method, route pattern and (lower-case) headers. */
export interface BoardRoute {
  method: string;
  route: string;
  headers?: Readonly<Record<string, string | undefined>>;
}

/** Routes (method and Bull Board's pattern) fitq follows when they change its queue. */
const FOLLOWED = new Set([
  'put /api/queues/:queueName/:jobId/retry',
  'put /api/queues/:queueName/retry/:queueStatus',
  'put /api/queues/:queueName/:jobId/clean',
  'put /api/queues/:queueName/clean/:queueStatus',
  'put /api/queues/:queueName/:jobId/promote',
  'put /api/queues/:queueName/promote',
  'patch /api/queues/:queueName/:jobId/priority',
  'put /api/queues/:queueName/pause',
  'put /api/queues/:queueName/resume',
  'put /api/queues/pause',
  'put /api/queues/resume',
  'put /api/queues/:queueName/empty',
  'put /api/queues/:queueName/obliterate',
]);

/** Why a route that changes the queue is refused even with actions allowed. */
const REFUSED: Record<string, string> = {
  'post /api/queues/:queueName/add': "a job added from Bull Board is no fitq run: fitq would reject it without running it (stage runs with fitq stage)",
  'patch /api/queues/:queueName/:jobId/update-data':
    "a run's job data is what it was staged with: editing it would leave fitq's staged index and the run's signature behind (fitq update changes a staged run)",
  'patch /api/queues/:queueName/:jobId/delay': "fitq keeps when a run may begin itself (fitq stage --begin): BullMQ's delay would not move it",
  'put /api/queues/:queueName/concurrency': "fitq's workers start runs by the resources they have free, not by BullMQ's global concurrency",
  'put /api/queues/:queueName/rate-limit': "fitq's workers do not follow BullMQ's rate limit",
  'put /api/queues/:queueName/rate-limit/release': "fitq's workers do not follow BullMQ's rate limit",
  'put /api/queues/:queueName/:jobId/remove-unprocessed-children': 'fitq runs have no BullMQ children (fitq stage --after keeps dependencies itself)',
  'put /api/queues/:queueName/job-schedulers/:schedulerId/remove': 'fitq stages no runs from BullMQ job schedulers',
  'patch /api/queues/:queueName/job-schedulers/:schedulerId': 'fitq stages no runs from BullMQ job schedulers',
  'put /api/queues/:queueName/job-schedulers/:schedulerId/run': "fitq stages no runs from BullMQ job schedulers: the job it added would be rejected, never run",
};

const READ_ONLY = 'the dashboard is read-only: start it with --allow-actions to act on runs';
const CROSS_SITE = "a change asked by another site's page: only the board's own page may act on runs";

/**
 * Whether a browser says the request comes from another site's page
 * (Sec-Fetch-Site, else an Origin that is not this host): such a page could
 * otherwise act through a loopback dashboard without a token.
 */
function fromAnotherSite(headers: Readonly<Record<string, string | undefined>>): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const { origin, host } = headers;
  if (origin === undefined || host === undefined) return false;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true; // `null`: a sandboxed page, a file
  }
}

/**
 * Why the dashboard refuses `request`, or undefined when it lets it through:
 * every read; with actions allowed, the changes fitq follows, asked from the
 * board's own page (or by a program, which sends no Origin).
 */
export function refusalOf(request: BoardRoute, allowActions: boolean): string | undefined {
  const method = request.method.toLowerCase();
  if (method === 'get' || method === 'head') return undefined;
  if (!allowActions) return READ_ONLY;
  const key = `${method} ${request.route}`;
  if (FOLLOWED.has(key)) return fromAnotherSite(request.headers ?? {}) ? CROSS_SITE : undefined;
  return REFUSED[key] ?? `fitq does not follow this change to its queue (${key}), so the dashboard does not make it`;
}
