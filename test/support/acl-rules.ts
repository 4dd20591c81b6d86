/**
 * The ACL rules docs/security.md gives for each role, read from the page
 * itself, so the tests run exactly what operators are told to configure.
 */
import { readFileSync } from 'node:fs';

export const ACL_ROLES = ['worker', 'stager', 'reader', 'board', 'admin'] as const;
export type AclRole = (typeof ACL_ROLES)[number];

/** The key prefix the CLI uses in tests (FITQ_PREFIX, default `fitq`). */
export const PREFIX = process.env.FITQ_PREFIX || 'fitq';

const SECURITY_DOC = new URL('../../docs/security.md', import.meta.url);

/** `user fitq-<role> on >PASSWORD …` as the page writes it: the rules after the user's name. */
function documentedRule(role: AclRole): string {
  const lines = readFileSync(SECURITY_DOC, 'utf8').split('\n');
  const found = lines.filter((line) => line.startsWith(`user fitq-${role} `));
  if (found.length !== 1) throw new Error(`docs/security.md should give one 'user fitq-${role} …' line, found ${found.length}`);
  return found[0]!.slice(`user fitq-${role} `.length).trim();
}

/**
 * A role's rule for one namespace of the test prefix (or, with `queue` `*`,
 * for every namespace: `fitq:*` for `fitq:{Q}:*`, as the page says), with
 * this password.
 */
export function aclRule(role: AclRole, queue: string, password: string): string {
  const namespace = queue === '*' ? `${PREFIX}:*` : `${PREFIX}:{${queue}}:*`;
  return documentedRule(role)
    .replace('>PASSWORD', `>${password}`)
    .replaceAll('fitq:{Q}:*', namespace);
}

/** The commands a role's rule allows, lower case (`client|id`), in the page's order. */
export function aclCommands(role: AclRole): string[] {
  return documentedRule(role)
    .split(/\s+/)
    .filter((rule) => rule.startsWith('+') && !rule.startsWith('+@'))
    .map((rule) => rule.slice(1).toLowerCase());
}
