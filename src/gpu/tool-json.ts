/** The JSON a GPU tool (rocm-smi, amd-smi) printed, read with the same care for each. */
import { quote } from '../text/quote.js';

/** The JSON a tool printed; undefined for no output at all; an Error quoting the text otherwise. */
export function toolJson(tool: string, text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${tool} did not answer JSON: ${quoted(text)}`);
  }
}

/** Text a tool printed, as an error message quotes it: on one line, cut short. */
export function quoted(text: string): string {
  return quote(text.trim().replace(/\s+/g, ' '));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
