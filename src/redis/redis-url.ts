/**
 * fitq's Redis URLs: what `--redis-url` / `FITQ_REDIS_URL` may say, read in
 * one place. ioredis reads only `redis://` and `rediss://`; the Sentinel and
 * Cluster forms (several hosts, a master name) are read here:
 *
 *   redis://[user:pass@]host[:port][/db]                      one Redis
 *   redis+sentinel://[user:pass@]host[:port],…/MASTER[/db]    Sentinel (port 26379 by default)
 *       ?sentinel_username=U&sentinel_password=P              the sentinels' own login, if any
 *   redis+cluster://[user:pass@]host[:port],…[/0]             Redis Cluster (port 6379 by default)
 *
 * `rediss…` is the same with TLS (to the data nodes, and to the sentinels).
 * The user and password are the data nodes'; the sentinels' login may also
 * come from FITQ_REDIS_SENTINEL_USERNAME / FITQ_REDIS_SENTINEL_PASSWORD.
 */
import { UsageError } from '../errors.js';

export interface HostPort {
  host: string;
  port: number;
}

interface Login {
  username?: string | undefined;
  password?: string | undefined;
}

/** Where fitq's Redis is: one server, a master found through sentinels, or a cluster. */
export type RedisTarget =
  | ({ kind: 'standalone'; tls: boolean; url: string } & Login)
  | ({
      kind: 'sentinel';
      tls: boolean;
      sentinels: HostPort[];
      masterName: string;
      db: number;
      sentinelUsername?: string | undefined;
      sentinelPassword?: string | undefined;
    } & Login)
  | ({ kind: 'cluster'; tls: boolean; nodes: HostPort[] } & Login);

export const DEFAULT_SENTINEL_PORT = 26379;
const DEFAULT_REDIS_PORT = 6379;

/** The environment variables the sentinels' login may come from. */
export const SENTINEL_LOGIN_ENV = ['FITQ_REDIS_SENTINEL_USERNAME', 'FITQ_REDIS_SENTINEL_PASSWORD'] as const;

const SCHEME = /^(rediss?)(?:\+(sentinel|cluster))?:\/\//i;

/** Query parameters of a Sentinel URL, by the option they set. */
const SENTINEL_PARAMS = { sentinel_username: 'sentinelUsername', sentinel_password: 'sentinelPassword' } as const;

/** Whether the URL asks for TLS (`rediss://`, `rediss+sentinel://`, `rediss+cluster://`, in any case). */
export function isTlsUrl(url: string): boolean {
  return SCHEME.exec(url.trim())?.[1]?.toLowerCase() === 'rediss';
}

/** The URL with every password (user info, `password=`, `sentinel_password=`) replaced by `***`, for messages. */
export function redactRedisUrl(url: string): string {
  // The user info ends at the authority's last `@` (a password may hold one), as a URL parser reads it.
  const authority = /^([a-z+]*:\/\/)([^/?#]*)/i.exec(url);
  let shown = url;
  if (authority) {
    const [whole, scheme, hosts] = authority as unknown as [string, string, string];
    const at = hosts.lastIndexOf('@');
    const colon = hosts.indexOf(':');
    if (at >= 0 && colon >= 0 && colon < at) shown = `${scheme}${hosts.slice(0, colon)}:***${hosts.slice(at)}${url.slice(whole.length)}`;
  }
  return shown.replace(/([?&](?:sentinel_)?password=)[^&#]*/gi, '$1***');
}

/**
 * Reads a Redis URL. `redis://` and `rediss://` go to ioredis as they are
 * (it reads their user, db and options); the Sentinel and Cluster forms are
 * read here. Throws UsageError, quoting the URL with its password hidden.
 */
export function parseRedisUrl(url: string, env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const trimmed = url.trim();
  const scheme = SCHEME.exec(trimmed);
  const invalid = (reason: string) => new UsageError(`invalid Redis URL '${redactRedisUrl(trimmed)}': ${reason}`);
  if (!scheme) {
    throw invalid('it must start with redis://, rediss://, redis+sentinel://, rediss+sentinel://, redis+cluster:// or rediss+cluster://');
  }
  const tls = scheme[1]!.toLowerCase() === 'rediss';
  const kind = scheme[2]?.toLowerCase() as 'sentinel' | 'cluster' | undefined;
  if (kind === undefined) return { kind: 'standalone', tls, url: trimmed };

  const rest = trimmed.slice(scheme[0].length);
  const queryAt = rest.indexOf('?');
  const beforeQuery = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = queryAt < 0 ? '' : rest.slice(queryAt + 1);
  const pathAt = beforeQuery.indexOf('/');
  const authority = pathAt < 0 ? beforeQuery : beforeQuery.slice(0, pathAt);
  const path = pathAt < 0 ? [] : beforeQuery.slice(pathAt + 1).split('/');
  if (path.length > 0 && path.at(-1) === '') path.pop();

  const at = authority.lastIndexOf('@');
  const login = at < 0 ? {} : readLogin(authority.slice(0, at), invalid);
  const defaultPort = kind === 'sentinel' ? DEFAULT_SENTINEL_PORT : DEFAULT_REDIS_PORT;
  const hosts = readHosts(authority.slice(at + 1), defaultPort, invalid);
  const params = readQuery(query, invalid);

  if (kind === 'cluster') {
    const [db, ...more] = path;
    if (more.length > 0) throw invalid(`unexpected '/${more.join('/')}' after the database`);
    if (db !== undefined && db !== '0') {
      throw invalid(`a Redis Cluster has only database 0, not '${decodePart(db, invalid)}'`);
    }
    const unknown = [...params.keys()][0];
    if (unknown !== undefined) throw invalid(`unknown parameter '${unknown}' (a cluster URL takes none)`);
    return { kind, tls, nodes: hosts, ...login };
  }

  const [masterPart, dbPart, ...more] = path;
  if (masterPart === undefined || masterPart === '') {
    throw invalid("it names no master: write the sentinels' master name after the hosts, e.g. redis+sentinel://h1,h2,h3/mymaster");
  }
  if (more.length > 0) throw invalid(`unexpected '/${more.join('/')}' after the database`);
  const masterName = decodePart(masterPart, invalid);
  const db = dbPart === undefined ? 0 : readDb(dbPart, invalid);
  const sentinelLogin: { sentinelUsername?: string; sentinelPassword?: string } = {};
  if (env.FITQ_REDIS_SENTINEL_USERNAME) sentinelLogin.sentinelUsername = env.FITQ_REDIS_SENTINEL_USERNAME;
  if (env.FITQ_REDIS_SENTINEL_PASSWORD) sentinelLogin.sentinelPassword = env.FITQ_REDIS_SENTINEL_PASSWORD;
  for (const [name, value] of params) {
    if (!(name in SENTINEL_PARAMS)) {
      throw invalid(`unknown parameter '${name}' (a Sentinel URL takes ${Object.keys(SENTINEL_PARAMS).join(' and ')})`);
    }
    sentinelLogin[SENTINEL_PARAMS[name as keyof typeof SENTINEL_PARAMS]] = value;
  }
  return { kind, tls, sentinels: hosts, masterName, db, ...login, ...sentinelLogin };
}

type Invalid = (reason: string) => UsageError;

function decodePart(text: string, invalid: Invalid): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid(`'${text}' is not valid percent-encoding`);
  }
}

function readLogin(userInfo: string, invalid: Invalid): Login {
  const colon = userInfo.indexOf(':');
  const username = decodePart(colon < 0 ? userInfo : userInfo.slice(0, colon), invalid);
  const password = colon < 0 ? undefined : decodePart(userInfo.slice(colon + 1), invalid);
  // `redis://:pass@host` is a password for the default user, as ioredis reads it.
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^\s[\]:/@,]+)(?::(\d*))?$/;

function readHosts(list: string, defaultPort: number, invalid: Invalid): HostPort[] {
  if (list === '') throw invalid('it names no host');
  return list.split(',').map((entry) => {
    const match = HOST_PORT.exec(entry);
    if (!match) throw invalid(`'${entry}' is not a host or host:port`);
    const port = match[2] === undefined || match[2] === '' ? defaultPort : Number(match[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`'${entry}' has no valid port (1 to 65535)`);
    return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
  });
}

function readDb(text: string, invalid: Invalid): number {
  if (!/^\d{1,5}$/.test(text)) throw invalid(`'${text}' is not a database number`);
  return Number(text);
}

function readQuery(query: string, invalid: Invalid): Map<string, string> {
  const params = new Map<string, string>();
  if (query === '') return params;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodePart(eq < 0 ? pair : pair.slice(0, eq), invalid);
    if (params.has(name)) throw invalid(`parameter '${name}' is given twice`);
    params.set(name, decodePart(eq < 0 ? '' : pair.slice(eq + 1), invalid));
  }
  return params;
}

/** The sentinels' or the cluster seeds' `host:port` list, as the URL gives it. */
export function targetHosts(target: Exclude<RedisTarget, { kind: 'standalone' }>): string {
  return (target.kind === 'sentinel' ? target.sentinels : target.nodes)
    .map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`))
    .join(',');
}

/** Where Redis is, as a person reads it: the URL without its password, or `sentinels H:P,… (master 'NAME')`, `cluster H:P,…`. */
export function describeTarget(target: RedisTarget): string {
  if (target.kind === 'standalone') return redactRedisUrl(target.url);
  return target.kind === 'sentinel' ? `sentinels ${targetHosts(target)} (master '${target.masterName}')` : `cluster ${targetHosts(target)}`;
}
