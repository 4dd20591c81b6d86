/**
 * Who stages a run: a user name and the host it was staged from, recorded
 * on every run (its `user` and `stagedFrom` fields). The name is the OS
 * user's, or FITQ_USER's (service accounts, scripts acting for someone);
 * the host is the machine's name. The one place a user name is read,
 * checked and shown.
 */
import { hostname, userInfo } from 'node:os';
import { UsageError } from '../errors.js';
import { USER_NAME_PATTERN } from '../resources/user-name.js';
import { quote } from '../text/quote.js';

/** The variable that names the stager instead of the OS user. */
export const USER_ENV = 'FITQ_USER';

export interface Stager {
  user: string;
  host: string;
}

/** The name, checked; a UsageError quoting it (and where it came from) otherwise. */
export function checkUserName(name: string, source: string): string {
  if (!USER_NAME_PATTERN.test(name)) {
    throw new UsageError(`invalid ${source} ${quote(name)}: a user name is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -)`);
  }
  return name;
}

/** The OS user's name; `uid1234` where the uid has no name (a container without a passwd entry). */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid${process.getuid?.() ?? 'unknown'}`;
  }
}

/** Who stages from this process: `user` if given, else FITQ_USER if set, else the OS user; on this host. */
export function stagerOf(env: NodeJS.ProcessEnv = process.env, user?: string): Stager {
  const name = user !== undefined ? checkUserName(user, 'user') : env[USER_ENV] ? checkUserName(env[USER_ENV], USER_ENV) : osUser();
  return { user: name, host: hostname() };
}

/** A run's stager as shown: `alice@box1`, `alice` when the host is not known. */
export function formatStager(user: string | undefined, host: string | undefined): string {
  if (user === undefined) return '';
  return host ? `${user}@${host}` : user;
}
