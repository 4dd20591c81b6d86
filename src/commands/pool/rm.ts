import { FitqCommand, inBatches } from '../../cli/base-command.js';

export default class PoolRm extends FitqCommand {
  static override summary = 'Remove pool resources (runs holding some keep them until they end).';
  static override description =
    "array.<id> removes the limit of an ended array; the limit of an array with staged or running runs is refused (it goes with the array's last run).";
  static override usage = 'pool rm NAME...';
  static override strict = false;
  static override examples = ['<%= config.bin %> pool rm license'];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(PoolRm);
    const names = argv as string[];
    await this.withClient(flags, (client) => client.removePool(names));
    this.log(`Removed ${names.join(', ')} from the pool.`);
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: name them ${inBatches('pool rm')}`;
  }
}
