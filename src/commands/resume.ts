import { FitqCommand } from '../cli/base-command.js';

export default class Resume extends FitqCommand {
  static override summary = 'Resume a paused queue: workers start runs again at once.';
  static override examples = ['<%= config.bin %> resume'];

  async run(): Promise<void> {
    const { flags } = await this.parse(Resume);
    const changed = await this.withClient(flags, (client) => client.setPaused(false));
    this.log(changed ? 'Resumed.' : 'The queue was not paused.');
  }
}
