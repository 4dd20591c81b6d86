/**
 * The process a run's spec asks the spawn helper for: its command, joining
 * its cgroups first when it has any (`--enforce`, usage/run-cgroup.ts), and
 * under the keeper when the worker reaps what escapes (subreaper.ts).
 */
import { KEEPER_SCRIPT, type KeeperSupport } from './subreaper.js';

/**
 * Joins the cgroups whose `cgroup.procs` files come first (up to `--`), then
 * becomes the command: so the command and all it starts are in them from
 * the start. A file it cannot write stops it (exit 125, saying which).
 */
const JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "fitq: cannot join the run\'s cgroup ($1)" >&2; exit 125; }; shift; done; shift; exec "$@"';

export function runCommand(file: string, args: readonly string[], procsFiles: readonly string[], keeper: KeeperSupport): { file: string; args: string[] } {
  const joined = procsFiles.length === 0 ? [file, ...args] : ['sh', '-c', JOIN_CGROUPS, 'fitq-cgroup', ...procsFiles, '--', file, ...args];
  return keeper.ok ? { file: 'perl', args: ['-e', KEEPER_SCRIPT, '--', String(keeper.prctl), ...joined] } : { file: joined[0]!, args: joined.slice(1) };
}
