import { FitqCommand } from '../cli/base-command.js';

export default class Pause extends FitqCommand {
  static override summary = 'Pause the queue: workers start no run until `fitq resume` (running runs go on).';
  static override description =
    'The same pause as BullMQ\'s Queue.pause() (and Bull Board\'s "pause"): staged runs keep their place, and `fitq runs` says why they wait.';
  static override examples = ['<%= config.bin %> pause', '<%= config.bin %> pause --queue gpu-box'];

  async run(): Promise<void> {
    const { flags } = await this.parse(Pause);
    const changed = await this.withClient(flags, (client) => client.setPaused(true));
    this.log(changed ? 'Paused: no run starts until fitq resume.' : 'The queue was already paused.');
  }
}
