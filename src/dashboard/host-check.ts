/**
 * Which hosts the dashboard answers to. A web page of another site can
 * point a name of its own at 127.0.0.1 (DNS rebinding): the browser then
 * takes the dashboard for that site and lets the page read every page of it
 * (and the action token in its forms). Such requests name the other site in
 * their Host header, so the dashboard answers only to loopback names, the
 * address it is bound to (this machine's name and addresses when bound to
 * all of them), and the names given with --allow-host; anything else is
 * refused before the token is looked at, on every route and stream.
 */
import { hostname, networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { html } from 'hono/html';
import { UsageError } from '../errors.js';
import { oneLine, quote } from '../text/quote.js';
import { isLoopbackHost } from './auth.js';
import type { DashboardEnv } from './env.js';
import { plainPage } from './plain-page.js';

/** The answer to a request naming another host: 421 Misdirected Request ("not this server's name"). */
export const UNKNOWN_HOST_STATUS = 421;

/** A DNS name (labels of letters, digits, `-` and `_`), an IPv4 address, or an IPv6 one (bracketed or not). */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;
/** A Host header: a name or address, and a port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^\s/?#@[\]:]+)(:\d{1,5})?$/i;

/** A host as compared: lower case, no trailing dot, IPv6 without brackets. */
function normalize(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** An `--allow-host` value, checked: a host name or an IP address, nothing else (no scheme, port or pattern). */
export function parseAllowedHost(value: string): string {
  const bare = value.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) === 0 && !HOST_NAME.test(value)) {
    throw new UsageError(`expected --allow-host to be a host name or an IP address (like dash.example.org or 192.0.2.7, no port), got ${quote(value)}`);
  }
  return normalize(value);
}

function isWildcard(host: string): boolean {
  const bare = normalize(host);
  return bare === '' || bare === '0.0.0.0' || (isIP(bare) === 6 && /^[0:]+$/.test(bare));
}

/** The hosts a dashboard answers to. */
export interface HostRule {
  /** Whether the dashboard answers to a Host header (`name[:port]`). */
  allows(hostHeader: string): boolean;
}

/**
 * The rule of a dashboard bound to `bindHost`, also answering to `allowed`
 * (each a parseAllowedHost value). This machine's addresses are read when
 * asked, so an address it gets later counts too.
 */
export function hostRule(bindHost: string, allowed: readonly string[]): HostRule {
  const names = new Set(allowed.map(parseAllowedHost));
  const bound = normalize(bindHost);
  const wildcard = isWildcard(bindHost);
  if (!wildcard) names.add(bound);
  // Reached from elsewhere: by this machine's name, as well as the address.
  const beyondLoopback = wildcard || !isLoopbackHost(bound);
  if (beyondLoopback) names.add(normalize(hostname()));
  const machineAddress = (host: string) =>
    Object.values(networkInterfaces()).some((addresses) => addresses?.some((address) => normalize(address.address) === host));
  return {
    allows(hostHeader) {
      const match = HOST_HEADER.exec(hostHeader.trim());
      if (!match) return false;
      const host = normalize(match[1]!);
      return isLoopbackHost(host) || names.has(host) || (wildcard && isIP(host) !== 0 && machineAddress(host));
    },
  };
}

/** The hostname a Host header names, for the refusal (the header itself when it names none). */
function shownHost(header: string): string {
  const match = HOST_HEADER.exec(header.trim());
  return oneLine(match ? normalize(match[1]!) : header).slice(0, 200);
}

/** The middleware: refuses a request naming a host the dashboard does not answer to, or none. */
export function requireKnownHost(rule: HostRule): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const header = c.req.header('host');
    if (header !== undefined && rule.allows(header)) return next();
    c.header('Cache-Control', 'no-store');
    const named = header === undefined ? html`The request names no host.` : html`This dashboard does not answer to the host <code>${shownHost(header)}</code>.`;
    return c.html(
      plainPage(
        'unknown host',
        'unknown-host',
        `${UNKNOWN_HOST_STATUS}: unknown host`,
        html`<p>${named}</p><p>It answers to loopback names (<code>localhost</code>, <code>127.0.0.1</code>, <code>[::1]</code>) and the address it is bound to. To reach it by another name (a reverse proxy's, this machine's DNS name), start it with <code>--allow-host NAME</code>.</p>`,
      ),
      UNKNOWN_HOST_STATUS,
    );
  };
}
