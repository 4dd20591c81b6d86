/**
 * The overview's activity chart: per minute, a bar of runs started and a
 * bar of runs ended (completed, and ended otherwise on top), and a line of
 * the mean duration of the runs that ended, on its own scale (right). The
 * plot is an SVG stretched to its box (bars and lines only), the labels are
 * HTML around it, so text keeps its size at any width.
 */
import { html } from 'hono/html';
import { formatClock, formatDuration } from '../units/time.js';
import type { Activity } from './activity.js';
import type { Html } from './layout.js';

/** The plot's own units: one minute is 10 wide, the height is 100. */
const SLOT = 10;
const HEIGHT = 100;

export function activityChart(activity: Activity, label: string): Html {
  const slots = activity.minutes.length;
  const barW = SLOT / 2 - 0.6;
  const maxCount = Math.max(1, ...activity.minutes.map((m) => Math.max(m.started, m.completed + m.endedOtherwise)));
  const maxDuration = activity.maxDurationMs ?? 0;
  const h = (count: number) => (count / maxCount) * HEIGHT;
  const yDuration = (ms: number) => HEIGHT - (maxDuration > 0 ? (ms / maxDuration) * (HEIGHT - 4) : 0);
  const points = activity.minutes.flatMap((m, i) => (m.meanDurationMs === undefined ? [] : [`${i * SLOT + SLOT / 2},${yDuration(m.meanDurationMs).toFixed(2)}`]));
  // Local time, as the dashboard's run tables show times.
  const time = (epochMs: number) => formatClock(epochMs, false);
  const n = (value: number) => value.toFixed(2);
  return html`<figure class="chart-fig" data-testid="activity-chart" data-started="${activity.started}" data-ended="${activity.ended}">
<div class="chart-box">
  <div class="chart-y" aria-hidden="true"><span>${maxCount}</span><span>${maxCount > 1 ? Math.round(maxCount / 2) : ''}</span><span>0</span></div>
  <svg class="chart" viewBox="0 0 ${slots * SLOT} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="${label}">
    <title>${label}</title>
    <line class="grid-line" x1="0" x2="${slots * SLOT}" y1="0.5" y2="0.5"></line>
    <line class="grid-line" x1="0" x2="${slots * SLOT}" y1="${HEIGHT / 2}" y2="${HEIGHT / 2}"></line>
    <line class="axis" x1="0" x2="${slots * SLOT}" y1="${HEIGHT - 0.5}" y2="${HEIGHT - 0.5}"></line>
    ${activity.minutes.map((m, i) => {
      const x = i * SLOT + 0.4;
      const ended = m.completed + m.endedOtherwise;
      const tip = `${time(m.start)}: ${m.started} started, ${m.completed} completed, ${m.endedOtherwise} ended otherwise${m.meanDurationMs === undefined ? '' : `, mean duration ${formatDuration(m.meanDurationMs)}`}`;
      return m.started + ended === 0
        ? ''
        : html`<g><title>${tip}</title><rect class="started" x="${n(x)}" y="${n(HEIGHT - h(m.started))}" width="${n(barW)}" height="${n(h(m.started))}"></rect><rect class="finished" x="${n(x + barW + 0.2)}" y="${n(HEIGHT - h(m.completed))}" width="${n(barW)}" height="${n(h(m.completed))}"></rect><rect class="failed" x="${n(x + barW + 0.2)}" y="${n(HEIGHT - h(ended))}" width="${n(barW)}" height="${n(h(m.endedOtherwise))}"></rect></g>`;
    })}
    ${points.length > 0 ? html`<polyline class="duration" vector-effect="non-scaling-stroke" points="${points.join(' ')}"></polyline>` : ''}
  </svg>
  <div class="chart-y right" aria-hidden="true"><span>${maxDuration > 0 ? formatDuration(maxDuration) : ''}</span><span></span><span>${maxDuration > 0 ? '0s' : ''}</span></div>
</div>
<div class="chart-x" aria-hidden="true"><span>${time(activity.minutes[0]?.start ?? 0)}</span><span>${time(activity.minutes[Math.floor(slots / 2)]?.start ?? 0)}</span><span>${time(activity.minutes[slots - 1]?.start ?? 0)}</span></div>
<figcaption class="legend"><span class="k-started">started</span><span class="k-completed">completed</span><span class="k-failed">ended otherwise</span><span class="k-duration">mean duration (right scale)</span></figcaption>
</figure>`;
}
