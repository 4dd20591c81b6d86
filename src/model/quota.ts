/**
 * A user's quota (`fitq quota set alice gpu=2 running=4 staged=1000`): the
 * most runs they may have running at once (`running`), the most not ended
 * (`staged`: staged, held or running, as Slurm's MaxSubmitJobs), and the
 * most of each resource their running runs may hold at once. Stored as the
 * hash `quota:<user>` (`running`, `staged`, `res:<resource>`), which
 * lua/includes/quotas/quotaOf.lua reads for the claim; what a user's runs
 * hold is `usage:<user>` (`runs`, `open`, `res:<resource>`). The one place
 * both layouts are written and read in TypeScript.
 */
import { UsageError } from '../errors.js';
import { formatMicros, MICROS_PER_UNIT, parseDecimal } from '../resources/amount.js';
import { parseResourceSpecs, sortResources, type Resources } from '../resources/spec.js';
import { arrayOfLimit } from '../resources/array-limit.js';
import { quote } from '../text/quote.js';

/** The user whose quota is everyone's without one of their own (no user name starts with `.`). */
export const DEFAULT_QUOTA_USER = '.default';

/** The counts a quota may bound besides resources. */
const COUNTS = ['running', 'staged'] as const;
type QuotaCount = (typeof COUNTS)[number];
const isCount = (name: string): name is QuotaCount => (COUNTS as readonly string[]).includes(name);

export interface Quota {
  running?: number;
  staged?: number;
  /** Exact amounts (micros), by resource. */
  resources: Resources;
}

/** What a user's runs hold now. */
export interface UserUsage {
  /** Runs running. */
  running: number;
  /** Runs not ended (staged, held or running). */
  open: number;
  /** What their running runs hold (micros), by resource. */
  resources: Resources;
}

const RESOURCE_FIELD = 'res:';

/** A quota as typed (`running=4 staged=1000 gpu=2 mem=64G`), checked: counts whole, amounts exact; a UsageError quoting what is wrong. */
export function parseQuota(specs: readonly string[]): Quota {
  const amounts = parseResourceSpecs(specs, { keepZero: true });
  if (amounts.size === 0) throw new UsageError('name what the quota bounds, e.g. running=4 staged=1000 gpu=2');
  const quota: Quota = { resources: new Map() };
  const resources = new Map<string, bigint>();
  for (const [name, micros] of amounts) {
    if (isCount(name)) {
      if (micros % MICROS_PER_UNIT !== 0n) throw new UsageError(`invalid ${quote(`${name}=${formatMicros(micros)}`)}: ${name} is a number of runs, a whole number`);
      quota[name] = Number(micros / MICROS_PER_UNIT);
    } else if (arrayOfLimit(name) !== undefined) {
      throw new UsageError(`invalid ${quote(name)}: an array's limit is the array's (fitq pool set ${name}=N), not a user's`);
    } else {
      resources.set(name, micros);
    }
  }
  quota.resources = sortResources(resources);
  return quota;
}

/** The hash fields of a quota (quota:<user>), as field, value pairs. */
export function quotaFields(quota: Quota): string[] {
  const fields: string[] = [];
  for (const name of COUNTS) if (quota[name] !== undefined) fields.push(name, String(quota[name]));
  for (const [name, micros] of quota.resources) fields.push(`${RESOURCE_FIELD}${name}`, formatMicros(micros));
  return fields;
}

/** The field of one limit a quota may hold, for removing it: `running`, `staged` or a resource. */
export function quotaField(name: string): string {
  return isCount(name) ? name : `${RESOURCE_FIELD}${name}`;
}

/** The `res:<resource>` fields of a stored hash that hold an amount, by resource (what is not one, written by hand, is left out). */
function resourceFields(hash: Record<string, string>): Resources {
  const resources = new Map<string, bigint>();
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith(RESOURCE_FIELD) && /^\d+\.?\d*$/.test(value)) resources.set(field.slice(RESOURCE_FIELD.length), parseDecimal(value));
  }
  return sortResources(resources);
}

/** A quota as stored; fields not written by fitq (by hand) are left out, as the claim leaves them. */
export function decodeQuota(hash: Record<string, string>): Quota {
  const quota: Quota = { resources: resourceFields(hash) };
  for (const name of COUNTS) if (/^\d+$/.test(hash[name] ?? '')) quota[name] = Number(hash[name]);
  return quota;
}

/** What a user's runs hold, as stored (usage:<user>); nothing held is left out. */
export function decodeUsage(hash: Record<string, string>): UserUsage {
  const count = (value: string | undefined) => Math.max(0, Number(value ?? 0) || 0);
  const resources = new Map([...resourceFields(hash)].filter(([, micros]) => micros > 0n));
  return { running: count(hash.runs), open: count(hash.open), resources };
}

/** `running=4 staged=1000 gpu=2`: a quota as typed. */
export function formatQuota(quota: Quota): string {
  const parts: string[] = [];
  for (const name of COUNTS) if (quota[name] !== undefined) parts.push(`${name}=${quota[name]}`);
  for (const [name, micros] of quota.resources) parts.push(`${name}=${formatMicros(micros)}`);
  return parts.join(' ');
}
