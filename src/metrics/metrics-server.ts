/**
 * A small HTTP server for a worker's metrics: `GET /metrics` answers with
 * the registry's text, anything else 404. Bound to 127.0.0.1 unless told
 * otherwise: metrics name hosts, workers and resources.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { UsageError } from '../errors.js';

export interface MetricsServer {
  /** `http://HOST:PORT/metrics`, with the port bound (port 0 picks a free one). */
  readonly url: string;
  close(): Promise<void>;
}

export async function serveMetrics(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`),
    );
  });
  await listen(server, host, port);
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' ? 'no such address here' : error.message;
      reject(new UsageError(`cannot serve metrics on --metrics-host '${host}' --metrics-port '${port}': ${why}`));
    });
    server.listen(port, host, () => resolve());
  });
}
