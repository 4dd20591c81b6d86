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
