/**
 * Access to the dashboard. Without a token it serves loopback only (the
 * command refuses any other --host); with one, every request and every
 * event stream must carry it: `Authorization: Bearer TOKEN`, or the cookie
 * set when a page is first opened with `?token=TOKEN`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { UsageError } from '../errors.js';
import { quote } from '../queue/names.js';
import type { DashboardEnv } from './context.js';
import { plainPage } from './plain-page.js';

export const TOKEN_COOKIE = 'fitq_dashboard_token';
export const TOKEN_ENV = 'FITQ_DASHBOARD_TOKEN';

/** Whether `host` only ever accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || bare.startsWith('::ffff:127.');
}

/** Refuses serving beyond this machine without a token, and an empty token. */
export function checkExposure(host: string, token: string | undefined): void {
  if (token !== undefined && token.trim() === '') throw new UsageError(`--token (or ${TOKEN_ENV}) is empty`);
  if (token === undefined && !isLoopbackHost(host)) {
    throw new UsageError(`refusing to serve the dashboard on --host ${quote(host)} without a token: give --token or ${TOKEN_ENV} (only 127.0.0.1, ::1 and localhost are served without one)`);
  }
}

/** Equal in constant time (digests: the lengths of what was typed tell nothing). */
function sameToken(given: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The token a request carries, from the header, the cookie or the query, in that order. */
function givenToken(c: Context): { value: string; fromQuery: boolean } | undefined {
  const header = c.req.header('authorization');
  const bearer = header === undefined ? undefined : /^Bearer\s+(.+)$/i.exec(header)?.[1];
  if (bearer !== undefined) return { value: bearer.trim(), fromQuery: false };
  const cookie = getCookie(c, TOKEN_COOKIE);
  if (cookie !== undefined) return { value: cookie, fromQuery: false };
  const query = c.req.query('token');
  return query === undefined ? undefined : { value: query, fromQuery: true };
}

/** The middleware: passes everything when there is no token. */
export function requireToken(token: string | undefined): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    if (token === undefined) return next();
    const given = givenToken(c);
    if (!given || !sameToken(given.value, token)) return refused(c, given !== undefined);
    if (given.fromQuery) {
      // Kept in a cookie scripts cannot read, sent back to this site only; the token leaves the address bar.
      setCookie(c, TOKEN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      if (c.req.method === 'GET') {
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
    }
    return next();
  };
}

function refused(c: Context, wrong: boolean): Response | Promise<Response> {
  c.header('WWW-Authenticate', 'Bearer realm="fitq dashboard"');
  c.header('Cache-Control', 'no-store');
  const why = wrong ? 'The token given is not this dashboard\'s.' : 'This dashboard needs its token.';
  return c.html(
    plainPage('token required', 'unauthorized', '401: token required', html`<p>${why}</p><p>Open the address with <code>?token=…</code> (as given to <code>fitq dashboard --token</code> or in <code>${TOKEN_ENV}</code>), or send <code>Authorization: Bearer …</code>.</p>`),
    401,
  );
}
