/**
 * The overview's activity chart as inline SVG: per minute, a bar of runs
 * started and a bar of runs ended (completed, and ended otherwise on top),
 * and a line of the mean duration of the runs that ended, on its own scale.
 */
import { html } from 'hono/html';
import { formatDuration } from '../cli/format.js';
import type { Activity } from './activity.js';
import type { Html } from './layout.js';

const WIDTH = 600;
const HEIGHT = 170;
const PAD = { left: 30, right: 44, top: 10, bottom: 20 };

export function activityChart(activity: Activity, label: string): Html {
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slots = activity.minutes.length;
  const slotW = plotW / slots;
  const barW = Math.max(1, slotW / 2 - 0.5);
  const maxCount = Math.max(1, ...activity.minutes.map((m) => Math.max(m.started, m.completed + m.endedOtherwise)));
  const maxDuration = activity.maxDurationMs ?? 0;
  const y = (count: number) => PAD.top + plotH - (count / maxCount) * plotH;
  const h = (count: number) => (count / maxCount) * plotH;
  const yDuration = (ms: number) => PAD.top + plotH - (maxDuration > 0 ? (ms / maxDuration) * plotH : 0);
  const points = activity.minutes.flatMap((m, i) => (m.meanDurationMs === undefined ? [] : [[PAD.left + i * slotW + slotW / 2, yDuration(m.meanDurationMs)] as const]));
  const time = (epochMs: number) => new Date(epochMs).toISOString().slice(11, 16);
  const first = activity.minutes[0]?.start ?? 0;
  const last = activity.minutes[slots - 1]?.start ?? 0;
  const n = (value: number) => value.toFixed(1);
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${label}" data-testid="activity-chart">
<title>${label}</title>
<line class="grid-line" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${n(y(maxCount / 2))}" y2="${n(y(maxCount / 2))}"></line>
<line class="grid-line" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${PAD.top}" y2="${PAD.top}"></line>
<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}"></line>
<text x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${maxCount}</text>
<text x="${PAD.left - 4}" y="${PAD.top + plotH}" text-anchor="end">0</text>
${maxDuration > 0 ? html`<text x="${WIDTH - PAD.right + 4}" y="${PAD.top + 4}">${formatDuration(maxDuration)}</text>` : ''}
<text x="${PAD.left}" y="${HEIGHT - 4}">${time(first)}</text>
<text x="${WIDTH - PAD.right}" y="${HEIGHT - 4}" text-anchor="end">${time(last)} UTC</text>
${activity.minutes.map((m, i) => {
  const x = PAD.left + i * slotW;
  const ended = m.completed + m.endedOtherwise;
  return html`${m.started > 0 ? html`<rect class="started" x="${n(x)}" y="${n(y(m.started))}" width="${n(barW)}" height="${n(h(m.started))}"><title>${time(m.start)}: ${m.started} started</title></rect>` : ''}${ended > 0 ? html`<rect class="finished" x="${n(x + barW + 0.5)}" y="${n(y(m.completed))}" width="${n(barW)}" height="${n(h(m.completed))}"><title>${time(m.start)}: ${m.completed} completed, ${m.endedOtherwise} ended otherwise</title></rect><rect class="failed" x="${n(x + barW + 0.5)}" y="${n(y(ended))}" width="${n(barW)}" height="${n(h(m.endedOtherwise))}"></rect>` : ''}`;
})}
${points.length > 1 ? html`<polyline class="duration" points="${points.map(([px, py]) => `${n(px)},${n(py)}`).join(' ')}"></polyline>` : ''}
${points.map(([px, py]) => html`<circle class="duration-dot" cx="${n(px)}" cy="${n(py)}" r="2"></circle>`)}
</svg>
<div class="legend"><span style="--k: var(--status-staged)">started</span><span style="--k: var(--status-running)">completed</span><span style="--k: var(--status-failed)">ended otherwise</span><span style="--k: var(--status-held)">mean duration</span></div>`;
}
