/** Where the dashboard shows runs: the runs page (with a query) and a run's page. */
import { runQueryParams, type RunQuery } from './run-list.js';

/** A run's page. */
export function runHref(queue: string, id: string): string {
  return `/runs/${encodeURIComponent(queue)}/${encodeURIComponent(id)}`;
}

/** The runs page showing what a query selects. */
export function runsHref(query: Partial<RunQuery>): string {
  const params = runQueryParams({ statuses: [], labels: {}, ...query });
  const search = params.toString();
  return search === '' ? '/runs' : `/runs?${search}`;
}
