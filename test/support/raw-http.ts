/**
 * Plain HTTP requests to a local server with any headers (fetch will not
 * send a Host header of the caller's choosing): the status, the headers,
 * and the body up to `maxBytes` (an event stream never ends; it is cut
 * there; 0: the headers only).
 */
import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function rawRequest(
  origin: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; localAddress?: string; maxBytes?: number } = {},
): Promise<RawResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers ?? {}, ...(options.localAddress ? { localAddress: options.localAddress } : {}) },
      (response) => {
        let body = '';
        const done = () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        if (options.maxBytes === 0) {
          response.destroy();
          done();
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
          if (body.length >= (options.maxBytes ?? Infinity)) {
            response.destroy();
            done();
          }
        });
        response.on('end', done);
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

export interface RawEventStream {
  status: number;
  /** The body of a refusal (a stream's is read with `until`). */
  refusal: string;
  /** Reads on until what came so far matches `pattern`; returns all that came. */
  until(pattern: RegExp): Promise<string>;
  close(): void;
}

/** A server-sent event stream (or its refusal), from `localAddress` (any of 127.0.0.0/8: many clients of one machine). */
export function openRawEventStream(origin: string, path: string, options: { headers?: Record<string, string>; localAddress?: string } = {}): Promise<RawEventStream> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: url.hostname, port: url.port, path, headers: { accept: 'text/event-stream', ...options.headers }, ...(options.localAddress ? { localAddress: options.localAddress } : {}) },
      (response) => {
        response.setEncoding('utf8');
        let text = '';
        let ended = false;
        const waiters = new Set<() => void>();
        const wake = () => waiters.forEach((waiter) => waiter());
        response.on('data', (chunk: string) => {
          text += chunk;
          wake();
        });
        response.on('close', () => {
          ended = true;
          wake();
        });
        const stream: RawEventStream = {
          status: response.statusCode ?? 0,
          get refusal() {
            return text;
          },
          until: (pattern) =>
            new Promise((done, fail) => {
              const check = () => {
                if (pattern.test(text)) {
                  waiters.delete(check);
                  done(text);
                } else if (ended) {
                  waiters.delete(check);
                  fail(new Error(`the stream ended before ${pattern}: ${text}`));
                }
              };
              waiters.add(check);
              check();
            }),
          close: () => response.destroy(),
        };
        if (stream.status === 200) resolve(stream);
        else response.on('end', () => resolve(stream));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}
