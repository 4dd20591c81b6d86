/**
 * `fitq drain` / `fitq undrain` (FitqClient.setDrained): checks the names
 * against the live workers first, so an unknown one changes nothing, then
 * drains or undrains each in one script call (setDrained-3.lua).
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { validateWorkerName } from '../model/names.js';
import type { Scripts } from './scripts.js';
import type { WorkerRecord } from '../model/worker-record.js';

export interface DrainParts {
  scripts: Scripts;
  /** The live workers, after a reap. */
  listWorkers: () => Promise<WorkerRecord[]>;
  /** The registered workers as they are (no reap). */
  readWorkers: () => Promise<WorkerRecord[]>;
}

/** Returns the workers as they are now, and which of them changed. */
export async function setDrained(parts: DrainParts, names: readonly string[], drained: boolean): Promise<{ worker: WorkerRecord; changed: boolean }[]> {
  names.forEach(validateWorkerName);
  const unique = [...new Set(names)];
  if (unique.length === 0) throw new UsageError(`name the workers to ${drained ? 'drain' : 'undrain'} (fitq workers lists them)`);
  const live = new Set((await parts.listWorkers()).map((worker) => worker.name));
  const unknown = unique.find((name) => !live.has(name));
  if (unknown !== undefined) throw new UsageError(`unknown worker ${quote(unknown)} (no live worker has that name)`);
  const changed = new Map<string, boolean>();
  for (const name of unique) {
    const result = await parts.scripts.setDrained(name, drained);
    if (result === undefined) throw new UsageError(`worker ${quote(name)} left meanwhile`);
    changed.set(name, result);
  }
  const workers = await parts.readWorkers();
  return unique.flatMap((name) => {
    const worker = workers.find((candidate) => candidate.name === name);
    return worker ? [{ worker, changed: changed.get(name)! }] : [];
  });
}
