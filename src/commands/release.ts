import { HoldCommand } from '../cli/hold-command.js';
import { HOLD_CHUNK } from '../operations/chunks.js';

export default class Release extends HoldCommand {
  static override summary = 'Release held runs: each goes back to its original place in the order.';
  static override description =
    'A released run starts as any staged run does, unless it still waits for its begin time (--begin, --delay) or its dependencies. ' +
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (--label or --array alone: the held runs); --dry-run lists them. ' +
    `Many runs are released ${HOLD_CHUNK} per script call, each part whole, so Redis is never held long: a read meanwhile may show the first parts released and the rest not yet.`;
  static override examples = ['<%= config.bin %> release 3f2a9c81d0e4', '<%= config.bin %> release --label sweep=lr'];
  static override strict = false;
  static override args = HoldCommand.args;
  static override flags = HoldCommand.flags;
  protected readonly mode = 'release';
}
