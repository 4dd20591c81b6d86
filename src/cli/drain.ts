/** What `fitq drain` and `fitq undrain` print. */
import { Flags } from '@oclif/core';
import { workerToJson, type WorkerRecord } from '../model/worker-record.js';
import { drainLine } from '../present/result-lines.js';

export const describeDrain = {
  jsonFlag: Flags.boolean({ summary: 'Print the workers (as fitq workers --json does) as a JSON array.' }),
  print(command: { log: (text: string) => void }, results: { worker: WorkerRecord; changed: boolean }[], json: boolean, drained: boolean): void {
    if (json) command.log(JSON.stringify(results.map(({ worker }) => workerToJson(worker)), null, 2));
    else for (const result of results) command.log(drainLine(result, drained));
  },
};
