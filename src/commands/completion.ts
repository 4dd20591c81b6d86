import { Args } from '@oclif/core';
import { FitqLocalCommand } from '../cli/base-command.js';
import { COMPLETION_SHELLS, completionScript } from '../cli/completion-scripts.js';

export default class Completion extends FitqLocalCommand {
  static override summary = 'Print the shell completion script for bash, zsh or fish: commands, flags, run ids, worker names and namespaces complete on TAB.';
  static override description =
    'bash: eval "$(fitq completion bash)" in ~/.bashrc. zsh: eval "$(fitq completion zsh)" in ~/.zshrc, after compinit. ' +
    'fish: fitq completion fish > ~/.config/fish/completions/fitq.fish. Run ids, workers and namespaces are read from the Redis the words typed name (--redis-url, --queue), else FITQ_REDIS_URL and FITQ_QUEUE.';
  static override args = { shell: Args.string({ description: 'bash, zsh or fish', required: true, options: [...COMPLETION_SHELLS] }) };
  static override examples = ['eval "$(<%= config.bin %> completion bash)"', '<%= config.bin %> completion fish > ~/.config/fish/completions/fitq.fish'];

  async run(): Promise<void> {
    const { args } = await this.parse(Completion);
    process.stdout.write(completionScript(args.shell as (typeof COMPLETION_SHELLS)[number]));
  }
}
