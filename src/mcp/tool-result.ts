/**
 * What a fitq MCP tool gives back: its result as structured content (and
 * the same JSON as text, for clients that read only text), or a tool error
 * with fitq's one-line message, never a stack.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { oneLine } from '../text/quote.js';

/** Runs a tool's work: its result, or its error as a tool error. */
export async function toolResult(work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const result = await work();
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
  } catch (error) {
    return toolError(error instanceof Error ? error.message : String(error));
  }
}

/** A tool error: fitq's message in one line. */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${oneLine(message)}` }] };
}
