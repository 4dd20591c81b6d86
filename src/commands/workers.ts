import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { renderTable } from '../cli/format.js';
import { describeLiveness } from '../model/liveness.js';
import { describeCapacity, describeDevices, deviceNotes, usedResources, workerState, workerToJson } from '../model/worker-record.js';
import { formatHumanResources } from '../resources/spec.js';

export default class Workers extends FitqCommand {
  static override summary = 'List live workers: capacity, what is in use, their runs and how long ago they last renewed their lease (or that they are not responding).';
  static override description =
    'STATE is active, draining (fitq drain: it claims no more runs, some still run) or drained (drained and idle; fitq undrain). ' +
    'GPUS shows each device: free, the share fitq\'s runs use, busy (fitq\'s runs fill it), foreign (a process fitq did not start holds it), ' +
    'lost (nvidia-smi cannot reach it) or stale (the worker\'s GPU reading is too old); a line below the table says why for each.';
  static override examples = ['<%= config.bin %> workers', '<%= config.bin %> workers --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print the workers as a JSON array.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(Workers);
    const workers = await this.withClient(flags, (client) => client.listWorkers());
    if (flags.json) {
      this.log(JSON.stringify(workers.map(workerToJson), null, 2));
      return;
    }
    if (workers.length === 0) {
      this.log('No live workers.');
      return;
    }
    this.log(
      renderTable(
        ['NAME', 'STATE', 'HOST', 'PID', 'CAPACITY', 'USED', 'GPUS', 'RUNS', 'HEARTBEAT'],
        workers.map((worker) => [
          worker.name,
          workerState(worker),
          worker.host,
          String(worker.pid),
          describeCapacity(worker),
          formatHumanResources(usedResources(worker)) || '-',
          describeDevices(worker),
          worker.runs.join(',') || '-',
          describeLiveness(worker.liveness),
        ]),
      ),
    );
    // Devices that take no run for a reason outside fitq: said in full below the table.
    for (const note of workers.flatMap(deviceNotes)) this.log(note);
  }
}
