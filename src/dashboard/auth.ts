/**
 * Access to the dashboard. Without a token it serves loopback only (the
 * command refuses any other --host); with one, every request and every
 * event stream must carry it: `Authorization: Bearer TOKEN`, or the session
 * cookie set when a page is first opened with `?token=TOKEN`. The cookie
 * holds a session value made when the dashboard starts, never the token: a
 * browser sends a host's cookies to every port of it, so another server
 * there gets nothing it could use elsewhere; and it is named after the
 * dashboard's port, so dashboards on one host each keep their own.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import type { DashboardEnv } from './env.js';
import { plainPage } from './plain-page.js';

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

/** The session cookie's name for a dashboard reached at `port`. */
export function sessionCookieName(port: number): string {
  return `fitq_dashboard_${port}`;
}

/** The port a request reached, as the browser sees it (its cookies' scope is the host, whatever the port). */
function portOf(c: Context): number {
  const url = new URL(c.req.url);
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

/**
 * What a request carries: the token (header, then query), or the session
 * cookie. The query before the cookie: a cookie of a dashboard since
 * restarted must not keep its user from logging in again.
 */
function givenCredential(c: Context): { kind: 'token' | 'query' | 'session'; value: string } | undefined {
  const header = c.req.header('authorization');
  const bearer = header === undefined ? undefined : /^Bearer\s+(.+)$/i.exec(header)?.[1];
  if (bearer !== undefined) return { kind: 'token', value: bearer.trim() };
  const query = c.req.query('token');
  if (query !== undefined) return { kind: 'query', value: query };
  const cookie = getCookie(c, sessionCookieName(portOf(c)));
  return cookie === undefined ? undefined : { kind: 'session', value: cookie };
}

/** The middleware: passes everything when there is no token. */
export function requireToken(token: string | undefined): MiddlewareHandler<DashboardEnv> {
  // This dashboard's session, until it stops: a restarted one asks for the token again.
  const session = randomBytes(32).toString('base64url');
  return async (c, next) => {
    if (token === undefined) return next();
    const given = givenCredential(c);
    if (!given || !sameToken(given.value, given.kind === 'session' ? session : token)) return refused(c, given !== undefined);
    if (given.kind === 'query') {
      // Kept in a cookie scripts cannot read, sent back to this site only; the token leaves the address bar.
      setCookie(c, sessionCookieName(portOf(c)), session, { httpOnly: true, sameSite: 'Strict', path: '/' });
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
  const why = wrong ? 'The token given is not this dashboard\'s, or its session ended (the dashboard was restarted).' : 'This dashboard needs its token.';
  return c.html(
    plainPage('token required', 'unauthorized', '401: token required', html`<p>${why}</p><p>Open the address with <code>?token=…</code> (as given to <code>fitq dashboard --token</code> or in <code>${TOKEN_ENV}</code>), or send <code>Authorization: Bearer …</code>.</p>`),
    401,
  );
}
