import { HoldCommand } from '../cli/hold-command.js';
import { HOLD_CHUNK } from '../operations/chunks.js';

export default class Hold extends HoldCommand {
  static override summary = 'Hold staged runs: a held run is never started until released (fitq release).';
  static override description =
    'Runs are named by id (or a unique prefix of one), or selected with --status, --label and --array (--label or --array alone: the staged runs); --dry-run lists them. ' +
    'A run that is not staged is refused with its status (exit 1); the others are held. ' +
    `Many runs are held ${HOLD_CHUNK} per script call, each part whole, so Redis is never held long: a read meanwhile may show the first parts held and the rest not yet.`;
  static override examples = ['<%= config.bin %> hold 3f2a9c81d0e4', '<%= config.bin %> hold --label sweep=lr'];
  static override strict = false;
  static override args = HoldCommand.args;
  static override flags = HoldCommand.flags;
  protected readonly mode = 'hold';
}
