/**
 * An overview of a namespace (the dashboard's): each run as its status and
 * times only, and the staged runs per demand shape, as the cheap reads of
 * operations/overview.ts give them.
 */
import { parseShape } from '../resources/shape.js';
import { formatDemands } from './run-data.js';
import type { RunStatus } from './run-record.js';

export interface RunSummary {
  status: RunStatus;
  /** Epoch ms. */
  stagedAt: number;
  startedAt?: number;
  endedAt?: number;
}

export interface StagedShape {
  /** As indexed: `gpu=1,mem=8000000000;gpus=0;t=60000`. */
  shape: string;
  /** Its demands in human units ("gpu=1 mem=8G"; "(none)"), as formatDemands shows them. */
  demands: string;
  /** The GPU devices its runs are pinned to, if any. */
  gpus: number[];
  /** Its time limit, ms, if any. */
  timeLimitMs?: number;
  /** Staged runs of this shape waiting in the fit index. */
  count: number;
  /** The first of them in claim order (the one a claim looks at). */
  head?: string;
}

/** A shape's parts (resources/shape.ts); one fitq never writes is shown as it is. */
export function describeShape(shape: string): Omit<StagedShape, 'count'> {
  const parsed = parseShape(shape);
  if (parsed === undefined) return { shape, demands: shape, gpus: [] };
  return {
    shape,
    demands: formatDemands(parsed.demands) || '(none)',
    gpus: [...parsed.gpus],
    ...(parsed.timeLimitMs === undefined ? {} : { timeLimitMs: parsed.timeLimitMs }),
  };
}
