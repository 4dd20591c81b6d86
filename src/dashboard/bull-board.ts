/**
 * Bull Board in the dashboard: each namespace's BullMQ queue (the runs
 * queue, `namespaceKeys(...).queue`), shown under the namespace's name.
 * Read-only unless actions are allowed, and even then only the changes fitq
 * follows get through (bull-board-actions.ts), and fitq catches up with
 * each at once (reconcileRuns). A run's data is served
 * with its env values, signature and notification URL hidden
 * (job-data-redaction.ts). Every asset comes from the dashboard itself
 * (offline-page.ts).
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { Queue } from 'bullmq';
import { Hono, type Env } from 'hono';
import type { FitqClient } from '../client.js';
import { refusalOf } from './bull-board-actions.js';
import { redactJobData } from './job-data-redaction.js';
import { offlinePages } from './offline-page.js';

export interface BullBoardOptions {
  /** Where the board is mounted, e.g. `/bull` (no trailing slash). */
  basePath: string;
  /** One client per namespace, by namespace name. */
  clients: ReadonlyMap<string, FitqClient>;
  readOnly: boolean;
  /** The dashboard's page of a run, linked from its card on the board. */
  runHref?: (namespace: string, runId: string) => string;
}

export interface MountedBullBoard {
  /** The board's name of each namespace's queue, as in its URLs (`/bull/queue/<name>`). */
  readonly queueNames: ReadonlyMap<string, string>;
  /** Closes the BullMQ queues the board reads (the clients' connections stay open). */
  close(): Promise<void>;
}

/**
 * The board's name of a namespace's queue: every namespace's queue is named
 * `runs`, so the namespace goes in front (a namespace name has no `:`).
 */
export function boardQueueName(namespace: string, queueName: string): string {
  return `${namespace}:${queueName}`;
}

function isRead(method: string): boolean {
  return ['get', 'head'].includes(method.toLowerCase());
}

export function mountBullBoard<E extends Env>(app: Hono<E>, options: BullBoardOptions): MountedBullBoard {
  const { runHref } = options;
  const basePath = options.basePath.replace(/\/+$/, '');
  if (!basePath.startsWith('/')) throw new Error(`Bull Board's base path must be a path under the dashboard's root, like '/bull': got '${options.basePath}'`);
  const queues: Queue[] = [];
  const queueNames = new Map<string, string>();
  const adapters = [...options.clients].map(([namespace, client]) => {
    const { name, prefix } = client.keys.queue;
    // The client's own connection (its URL, TLS and user); a board that reads writes nothing at start.
    const queue = new Queue(name, { prefix, connection: client.redis, skipMetasUpdate: true });
    queues.push(queue);
    queueNames.set(namespace, boardQueueName(namespace, name));
    const adapter = new BullMQAdapter(queue, {
      readOnlyMode: options.readOnly,
      allowRetries: !options.readOnly,
      prefix: `${namespace}:`,
      displayName: namespace,
      description: `fitq namespace ${namespace} (${prefix})`,
      ...(runHref && { externalJobUrl: (job) => ({ href: runHref(namespace, String(job.id)), displayText: 'fitq run page' }) }),
    });
    // Every job Bull Board's API sends (the queues list, a job) goes through its formatter.
    adapter.setFormatter('data', redactJobData);
    return adapter;
  });

  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(basePath);
  createBullBoard({
    queues: adapters,
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'fitq',
        hideDocsLink: true,
        miscLinks: [{ text: 'fitq dashboard', url: `${basePath.replace(/\/[^/]*$/, '')}/` }],
      },
      handlerHooks: {
        before: ({ method, route, request }) => {
          const refusal = refusalOf({ method, route, headers: request.headers }, !options.readOnly);
          return refusal === undefined ? { allow: true } : { allow: false, status: 403, message: refusal };
        },
        // A change fitq follows was let through: fitq catches up with it at once, as a command that changes state does
        // (reads never do; workers do as they poll, so a failure here is left to them).
        after: async ({ method }, result) => {
          if (!isRead(method)) for (const client of options.clients.values()) await client.reconcile().catch(() => undefined);
          return result;
        },
      },
    },
  });

  const board = new Hono();
  board.use('*', offlinePages());
  board.route('/', serverAdapter.registerPlugin());
  // The board answers at `/bull`, not `/bull/` (a strict router tells them apart): one way in.
  app.get(`${basePath}/`, async (c, next) => (c.req.path.endsWith('/') ? c.redirect(basePath) : next()));
  app.route(basePath, board);

  return {
    queueNames,
    close: async () => {
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}
