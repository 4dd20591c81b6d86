/**
 * Capacity-versus-reserved bars: one row per resource, the reserved part
 * filled, and what a worker holds back for its blocked head shown beside it.
 */
import { html } from 'hono/html';
import { formatHumanAmount, formatMicros, percent } from '../resources/amount.js';
import type { Html } from './layout.js';

export interface BarInput {
  name: string;
  /** Micros. */
  capacity: bigint;
  used: bigint;
  /** Micros of what is free held back for a blocked head, if any. */
  held?: bigint;
  /** data-testid of the row. */
  testId: string;
}


export function bar({ name, capacity, used, held = 0n, testId }: BarInput): Html {
  const usedPct = percent(used, capacity);
  const heldPct = Math.min(100 - usedPct, percent(held, capacity));
  const level = usedPct >= 100 ? ' full' : usedPct >= 85 ? ' high' : '';
  return html`<div class="bar-row" data-testid="${testId}" data-used="${formatMicros(used)}" data-capacity="${formatMicros(capacity)}"${held > 0n ? html` data-held="${formatMicros(held)}"` : ''}>
  <span class="bar-name" title="${name}">${name}</span>
  <span class="bar" role="meter" aria-label="${name} reserved" aria-valuemin="0" aria-valuemax="${formatMicros(capacity)}" aria-valuenow="${formatMicros(used)}">
    <span class="bar-fill${level}" style="width: ${usedPct}%"></span>${heldPct > 0 ? html`<span class="bar-held" style="left: ${usedPct}%; width: ${heldPct}%" title="held for the blocked head"></span>` : ''}
  </span>
  <span class="bar-val">${formatHumanAmount(used)} / ${formatHumanAmount(capacity)}</span>
</div>`;
}
