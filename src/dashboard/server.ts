/** Serving the dashboard's app over HTTP (@hono/node-server) until stopped. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import type { DashboardEnv } from './env.js';

export interface DashboardServer {
  /** Where it listens, e.g. `http://127.0.0.1:7070` (the port bound, when 0 was asked for). */
  url: string;
  /** Stops listening and ends every open connection (event streams included). */
  close(): Promise<void>;
}

/** Listens on host:port; a port taken or a host not of this machine is a UsageError naming it. */
export async function startDashboardServer(app: Hono<DashboardEnv>, options: { host: string; port: number }): Promise<DashboardServer> {
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(listenError(error, options));
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const shownHost = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${shownHost}:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function listenError(error: NodeJS.ErrnoException, { host, port }: { host: string; port: number }): Error {
  const where = `${quote(host)} port ${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new UsageError(`cannot serve on ${where}: the port is in use (give another --port)`, { cause: error });
    case 'EADDRNOTAVAIL':
      return new UsageError(`cannot serve on --host ${quote(host)}: no such address on this machine`, { cause: error });
    case 'EACCES':
      return new UsageError(`cannot serve on ${where}: permission denied (ports below 1024 need privileges)`, { cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UsageError(`cannot serve on --host ${quote(host)}: unknown host`, { cause: error });
    default:
      return error;
  }
}
