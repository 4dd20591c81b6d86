/**
 * How many `fitq_staged_runs` series a scrape shows: the shapes with the
 * most staged runs get one each, the rest are summed into one `other`
 * series, so a sweep over 20,000 amounts makes a bounded scrape and the sum
 * over the series is still every staged run of the fit index.
 */
import { UsageError } from '../errors.js';
import { shapeLabel } from '../resources/shape.js';
import { quote } from '../text/quote.js';

/** Shapes with a series of their own unless told otherwise (`fitq dashboard --metrics-shapes`). */
export const DEFAULT_METRICS_SHAPES = 50;
/** The most one may ask for: each is a series of every scrape. */
export const MAX_METRICS_SHAPES = 10_000;
/** The `shape` label of the staged runs of every shape without a series of its own (no shape is spelt so). */
export const OTHER_SHAPES = 'other';
/**
 * Shapes whose runs a scrape counts at least (readMetrics-*.lua): the
 * biggest shapes are exact while no more are staged; beyond, they are the
 * biggest among the first of each group in the staged order.
 */
const SHAPES_READ = 1000;

/** The shapes whose runs a scrape showing `shown` shapes counts. */
export function shapesToRead(shown: number): number {
  return Math.max(shown, SHAPES_READ);
}

/** `--metrics-shapes` as typed: a whole number from 0 to MAX_METRICS_SHAPES. */
export function parseMetricsShapes(flag: string, text: string): number {
  const shapes = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(shapes <= MAX_METRICS_SHAPES)) throw new UsageError(`expected ${flag} to be a number of shapes from 0 to ${MAX_METRICS_SHAPES}, got ${quote(text)}`);
  return shapes;
}

/**
 * The series of `fitq_staged_runs`, label -> staged runs: the `shown`
 * labels with the most runs (ties by label), biggest first, then `other`
 * with the rest of `total` when any is left. A shape's time limit and user
 * are left out of its label (shapeLabel), or each limit and each user would
 * be a series: who staged what is the `user` label of per-run series.
 */
export function shapeSeries(shapes: ReadonlyMap<string, number>, total: number, shown: number): [string, number][] {
  const byLabel = new Map<string, number>();
  for (const [shape, count] of shapes) {
    const label = shapeLabel(shape);
    byLabel.set(label, (byLabel.get(label) ?? 0) + count);
  }
  const ranked = [...byLabel].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const kept = ranked.slice(0, shown);
  const rest = total - kept.reduce((sum, [, count]) => sum + count, 0);
  return rest > 0 || ranked.length > shown ? [...kept, [OTHER_SHAPES, Math.max(0, rest)]] : kept;
}
