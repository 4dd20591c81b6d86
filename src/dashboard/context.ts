/**
 * What every dashboard page and route shares: one FitqClient per namespace
 * shown, whether actions are allowed, the access rules, the live feed that
 * tells open pages something changed, the readers of followed run output,
 * and the limits on open streams.
 */
import { UsageError } from '../errors.js';
import { FitqClient, resolveNamespace, type ClientOptions } from '../client.js';
import { quote } from '../text/quote.js';
import { hostRule, type HostRule } from './host-check.js';
import { LiveFeed } from '../live/feed.js';
import { comingBack } from '../redis/connection.js';
import { NamespaceLogReader } from './log-followers.js';
import { StreamSlots } from './stream-slots.js';

export interface DashboardContext {
  /** Namespace name -> its client, in the order the namespaces were given. */
  clients: Map<string, FitqClient>;
  /** `--allow-actions`: routes that change runs or workers exist only then. */
  allowActions: boolean;
  /** Required on every request and stream when set (auth.ts). */
  token?: string;
  /** The hosts requests may name (host-check.ts). */
  hosts: HostRule;
  /** Fitq's events of every namespace, fanned out to /events; absent, /events only keeps streams open. */
  live?: LiveFeed;
  /** Namespace name -> the reader of every run output its pages follow. */
  logs: Map<string, NamespaceLogReader>;
  /** The streams (events, run output) open now, within their limits. */
  streams: StreamSlots;
  /** What the app opened beside the clients (Bull Board's queues), closed first. */
  closers: (() => Promise<void>)[];
  /** `--metrics-shapes`: demand shapes with a series of their own at /metrics (default: src/metrics/shape-series.ts). */
  metricsShapes?: number | undefined;
}

export interface DashboardContextOptions {
  /** Connection (URL, TLS) and prefix, shared by every namespace. */
  connection: Omit<ClientOptions, 'queue'>;
  /** Namespaces to show; none: the one fitq commands use (FITQ_QUEUE or "default"). */
  queues: readonly string[];
  allowActions: boolean;
  token?: string | undefined;
  /** The hosts requests may name; default: loopback names only. */
  hosts?: HostRule | undefined;
  metricsShapes?: number | undefined;
}

/** Connects a client per namespace and starts the live feed; close with closeDashboardContext. */
export async function createDashboardContext(options: DashboardContextOptions): Promise<DashboardContext> {
  const queues = options.queues.length > 0 ? options.queues : [resolveNamespace(options.connection).queue];
  const twice = queues.find((queue, i) => queues.indexOf(queue) !== i);
  if (twice !== undefined) throw new UsageError(`--queue ${quote(twice)} given twice`);
  const clients = new Map<string, FitqClient>();
  try {
    // One Redis, checked (evictionCheck) once.
    const quiet = { ...options.connection, evictionCheck: undefined };
    for (const queue of queues) {
      // A command fails fast when Redis is away (the page says so), but, unlike a CLI command's, the connection comes back with Redis.
      const { retryStrategy, up } = comingBack();
      const redisOptions = { ...options.connection.redisOptions, retryStrategy };
      // No user key: whoever uses the page is not whoever started the dashboard, so it changes no signed run (security.md).
      clients.set(queue, await FitqClient.connect({ ...(clients.size === 0 ? options.connection : quiet), redisOptions, queue, keyFile: false }));
      up();
    }
    const live = await LiveFeed.start(quiet, [...clients.values()].map((client) => client.keys));
    const hosts = options.hosts ?? hostRule('127.0.0.1', []);
    const logs = new Map([...clients].map(([queue, client]) => [queue, new NamespaceLogReader(client, quiet)]));
    const token = options.token === undefined ? {} : { token: options.token };
    return { clients, allowActions: options.allowActions, ...token, hosts, live, logs, streams: new StreamSlots(), closers: [], metricsShapes: options.metricsShapes };
  } catch (error) {
    await Promise.all([...clients.values()].map((client) => client.close()));
    throw error;
  }
}

export async function closeDashboardContext(context: DashboardContext): Promise<void> {
  for (const close of context.closers.splice(0)) await close();
  await context.live?.close();
  await Promise.all([...context.logs.values()].map((reader) => reader.close()));
  await Promise.all([...context.clients.values()].map((client) => client.close()));
}
