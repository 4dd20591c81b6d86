import { FitqCommand } from '../../cli/base-command.js';
import { printPool } from './ls.js';

export default class PoolSet extends FitqCommand {
  static override summary = 'Set cluster-wide pool resources, shared by every worker of the namespace.';
  static override description =
    'A run demanding a pool resource (e.g. -r license=1) reserves it from the pool, and the rest from its worker, in one atomic claim. ' +
    'array.<id>=N changes the limit of an array (the %N of --array) that has staged or running runs; an array with none is refused.';
  static override usage = 'pool set NAME=VALUE...';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> pool set license=4',
    '<%= config.bin %> pool set db-conn=20 api-quota=100',
    '<%= config.bin %> pool set array.3f2a9c81d0e4=8',
  ];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(PoolSet);
    const pool = await this.withClient(flags, (client) => client.setPool(argv as string[]));
    printPool(this, pool);
  }
}
