/**
 * Notification receivers for tests: real HTTP servers (node:http) on free
 * ports of 127.0.0.1 that record each POST and answer as the test says (a
 * status, a redirect, or never), counting the connections open to them.
 * Whatever a test starts is closed after it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface Received {
  path: string;
  contentType: string | undefined;
  body: Record<string, unknown>;
}

/** A status, a status with headers (a redirect's location), or undefined: never answer. */
export type Answer = number | { status: number; headers: Record<string, string> } | undefined;

export interface Receiver {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  received: Received[];
  /** Connections open to it now. */
  open(): number;
  /** The most connections it had open at once. */
  mostOpen(): number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A local server answering each POST with `answer(n)` (n: the POSTs so far, from 1). */
export async function startReceiver(answer: (n: number) => Answer): Promise<Receiver> {
  const received: Received[] = [];
  let open = 0;
  let mostOpen = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ path: request.url ?? '', contentType: request.headers['content-type'], body: JSON.parse(body) as Record<string, unknown> });
      const reply = answer(received.length);
      if (reply === undefined) return; // never answers
      const { status, headers } = typeof reply === 'number' ? { status: reply, headers: {} } : reply;
      response.writeHead(status, headers);
      response.end();
    });
  });
  server.on('connection', (socket) => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    socket.on('close', () => (open -= 1));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, open: () => open, mostOpen: () => mostOpen };
}
