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

/**
 * A table printed a page of rows at a time (`fitq runs --all`): the header
 * with the first page, each column as wide as the widest cell printed so
 * far (a later page's wider cell widens the column from then on).
 */
export function tableWriter(header: readonly string[]): (cells: readonly (readonly string[])[]) => string {
  const widths = header.map((title) => title.length);
  let first = true;
  return (cells) => {
    const rows = cells.map((row) => row.map(oneLine));
    rows.forEach((row) => row.forEach((cell, column) => (widths[column] = Math.max(widths[column] ?? 0, cell.length))));
    const line = (row: readonly string[]) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd();
    const lines = [...(first ? [line(header)] : []), ...rows.map(line)];
    first = false;
    return lines.join('\n');
  };
}
