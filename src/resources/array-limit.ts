/**
 * An array's limit (`--array 0-19%4`): a pool resource of its own,
 * `array.<id>`, that each of its runs demands 1 of (see sweep.ts). It is
 * the array's, not the run's: what a person reads of a run's demands, and
 * what the run is told (FITQ_RESOURCES), leave it out.
 */
import type { Resources } from './spec.js';

/** The pool resource of an array with a limit: `array.<id>`. */
export const ARRAY_RESOURCE_PREFIX = 'array.';
const ARRAY_LIMIT = /^array\.([0-9a-f]{12})$/;

/** The array whose limit a resource is (`array.<id>`, the id as newArrayId makes them), if it is one. */
export function arrayOfLimit(resource: string): string | undefined {
  return ARRAY_LIMIT.exec(resource)?.[1];
}

/**
 * Demands without arrays' limits: a run of an array demands 1 of its
 * array's limit only so that the claim counts it; it is the array's, not
 * the run's, so neither the run (FITQ_RESOURCES) nor a person reading its
 * demands sees it.
 */
export function withoutArrayLimits(resources: Resources): Resources {
  return new Map([...resources].filter(([name]) => arrayOfLimit(name) === undefined));
}
