import { Flags } from '@oclif/core';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { FitqCommand } from '../cli/base-command.js';
import { createMcpServer } from '../mcp/server.js';
import { cliSecret } from '../security/secret.js';

export default class Mcp extends FitqCommand {
  static override summary = "Serve fitq's tools to an agent over the Model Context Protocol (MCP), on stdin and stdout.";
  static override description =
    'Tools that read (list_runs, show_run, why_waiting, run_log, list_workers, list_pools, queue_summary, wait_runs) ' +
    'and that preview a change without writing (preview_stage, preview_update, preview_cancel, preview_restart) always work; ' +
    'tools that change the queue (stage_run, update_runs, hold_runs, release_runs, cancel_runs, restart_runs) are refused unless --allow-actions. ' +
    'An MCP client starts it as a command: see README, "For agents". It runs until its client closes stdin.';
  static override examples = ['<%= config.bin %> mcp', '<%= config.bin %> mcp --queue gpu-box --allow-actions'];
  static override flags = {
    'allow-actions': Flags.boolean({ summary: 'Let the client stage, update, hold, release, cancel and restart runs (each tool is marked as changing state, so a client asks its user first).' }),
    'secret-file': Flags.string({
      summary: 'Sign the runs it stages with the shared secret in this file, for workers that require signed runs.',
      description: 'Default: the file named by FITQ_SECRET_FILE, else the secret in FITQ_SECRET; none: the runs are not signed.',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Mcp);
    const secret = cliSecret(flags['secret-file']);
    await this.withClient(
      flags,
      async (client) => {
        const server = createMcpServer(client, { version: this.config.version, allowActions: flags['allow-actions'] });
        const closed = new Promise<void>((resolve) => (server.server.onclose = resolve));
        // (stdout is the protocol's: nothing else may write there.)
        await server.connect(new StdioServerTransport());
        const close = () => void server.close();
        process.stdin.once('end', close);
        process.once('SIGINT', close);
        process.once('SIGTERM', close);
        await closed;
      },
      { secret },
    );
  }
}
