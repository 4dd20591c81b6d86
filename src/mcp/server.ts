/**
 * `fitq mcp`'s server: fitq's tools over the Model Context Protocol, on one
 * client of one namespace: reads (read-tools.ts, queue-tools.ts), previews
 * of changes (preview-tools.ts), and changes (change-tools.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FitqClient } from '../client.js';
import { registerChangeTools } from './change-tools.js';
import { registerPreviewTools } from './preview-tools.js';
import { registerQueueTools } from './queue-tools.js';
import { registerReadTools } from './read-tools.js';

export function createMcpServer(client: FitqClient, options: { version: string; allowActions: boolean }): McpServer {
  const server = new McpServer(
    { name: 'fitq', version: options.version },
    {
      instructions:
        'fitq is a resource-aware run queue: runs are shell commands with demands (gpu=1 mem=8G) that workers start when they fit. ' +
        'Ask why_waiting for fitq\'s own answer to why a run has not started.' +
        (options.allowActions ? '' : ' This server only reads: its tools that change the queue are refused.'),
    },
  );
  registerReadTools(server, client);
  registerQueueTools(server, client);
  registerPreviewTools(server, client);
  registerChangeTools(server, client, options.allowActions);
  return server;
}
