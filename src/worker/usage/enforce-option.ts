/** `--enforce mem,cpu`: which demands a worker holds its runs to, read from what was typed. */
import { HostSupportError, UsageError } from '../../errors.js';
import { quote } from '../../text/quote.js';
import { ENFORCEABLE, openCgroupLayout, type CgroupLayout, type Enforced } from './cgroup-host.js';

/** The demands listed (comma-separated, the flag repeated or not); a name that is none of ENFORCEABLE is refused. */
export function parseEnforce(value: string | readonly string[] | undefined): ReadonlySet<Enforced> {
  const listed = (typeof value === 'string' ? [value] : (value ?? [])).flatMap((item) => item.split(',')).map((item) => item.trim());
  const enforce = new Set<Enforced>();
  for (const name of listed) {
    if (!(ENFORCEABLE as readonly string[]).includes(name)) {
      throw new UsageError(`expected --enforce to list ${ENFORCEABLE.join(' and ')} (comma-separated), got ${quote(name)}`);
    }
    enforce.add(name as Enforced);
  }
  return enforce;
}

/**
 * The worker's cgroups for `--enforce`, made at its start; none when nothing
 * is enforced. Where they cannot be made, the worker does not start
 * (HostSupportError, saying why): a run is never let run unheld by a
 * worker asked to hold it.
 */
export function openEnforcement(enforce: ReadonlySet<Enforced>): CgroupLayout | undefined {
  if (enforce.size === 0) return undefined;
  const layout = openCgroupLayout(enforce);
  if ('why' in layout) throw new HostSupportError(`--enforce ${[...enforce].join(',')}: cannot hold runs to their demands here: ${layout.why}`);
  return layout;
}

/** The worker's log line about it: `Runs are held to their mem and cpu demands in cgroups (v1) below /sys/fs/cgroup/memory/fitq.42`. */
export function enforcementText(enforce: ReadonlySet<Enforced>, layout: CgroupLayout): string {
  return `Runs are held to their ${[...enforce].join(' and ')} demands in cgroups (v${layout.version}) below ${layout.memory}; a run without such a demand is measured, not limited`;
}
