/**
 * A capacity bar as text, as htop draws one: `gpu [||||||      3/4]`, the
 * used part filled, the amounts in human units inside the bracket.
 */
import cliTruncate from 'cli-truncate';
import { formatHumanAmount, percent } from '../resources/amount.js';

/** Columns a bar takes, its name included. */
export const BAR_WIDTH = 30;
const NAME_WIDTH = 8;

export function capacityBar(name: string, used: bigint, capacity: bigint): string {
  const label = cliTruncate(name, NAME_WIDTH).padEnd(NAME_WIDTH);
  const inner = BAR_WIDTH - NAME_WIDTH - 3;
  const amounts = `${formatHumanAmount(used < 0n ? 0n : used)}/${formatHumanAmount(capacity)}`;
  const filled = Math.round((percent(used, capacity) / 100) * inner);
  const body = '|'.repeat(filled).padEnd(inner);
  // The amounts over the bar's right end, as htop writes them.
  const shown = amounts.length < inner ? body.slice(0, inner - amounts.length) + amounts : amounts.slice(0, inner);
  return `${label} [${shown}]`;
}
