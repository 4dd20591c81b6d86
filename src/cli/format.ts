/**
 * Plain-text rendering for the CLI: aligned tables and warnings (times and
 * durations: units/time.ts).
 */
import { oneLine } from '../text/quote.js';

/** A warning for the person at the terminal: one line on stderr. */
export function printWarning(warning: string): void {
  process.stderr.write(`Warning: ${oneLine(warning)}\n`);
}

/**
 * Left-aligned columns separated by two spaces; header first. Every cell is
 * shown on one line, its control characters escaped (text/quote.ts, oneLine):
 * cells hold what users typed and what Redis holds.
 */
export function renderTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(oneLine));
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
