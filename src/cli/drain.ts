/** What `fitq drain` and `fitq undrain` print. */
import { Flags } from '@oclif/core';
import { workerState, workerToJson, type WorkerRecord } from '../model/worker-record.js';

/** What `fitq drain` (or `undrain`) says of one worker. */
export function drainLine({ worker, changed }: { worker: WorkerRecord; changed: boolean }, drained: boolean): string {
  if (!drained) return changed ? `Worker ${worker.name} undrained: it claims runs again` : `Worker ${worker.name} was not drained`;
  const already = changed ? '' : ' (already)';
  const state = workerState(worker);
  if (state === 'drained') return `Worker ${worker.name} drained${already}: it runs nothing and claims nothing more`;
  const runs = worker.runs.length;
  return `Worker ${worker.name} draining${already}: ${runs} run${runs === 1 ? '' : 's'} still running, it claims nothing more`;
}

export const describeDrain = {
  jsonFlag: Flags.boolean({ summary: 'Print the workers (as fitq workers --json does) as a JSON array.' }),
  print(command: { log: (text: string) => void }, results: { worker: WorkerRecord; changed: boolean }[], json: boolean, drained: boolean): void {
    if (json) command.log(JSON.stringify(results.map(({ worker }) => workerToJson(worker)), null, 2));
    else for (const result of results) command.log(drainLine(result, drained));
  },
};
