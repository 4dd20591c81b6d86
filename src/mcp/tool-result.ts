/**
 * What fitq's MCP tools share: what a tool gives back (its result as
 * structured content, and the same JSON as text for clients that read only
 * text, or a tool error with fitq's one-line message, never a stack), the
 * annotations of a tool that only reads, and how runs are named.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
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

/** The annotations of a tool that only reads. */
export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Runs named by a tool's input, as the CLI takes them. */
export const runRefs = z.array(z.string().min(1)).min(1).max(1000).describe('Run ids, or unique prefixes of them');
