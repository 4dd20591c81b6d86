import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { renderTable } from '../../cli/format.js';
import type { PoolResource } from '../../queue/pools.js';
import { formatMicros } from '../../resources/amount.js';

export default class PoolLs extends FitqCommand {
  static override summary = "List the namespace's pool resources: capacity, used, free.";
  static override examples = ['<%= config.bin %> pool ls', '<%= config.bin %> pool ls --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print the pool as JSON.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(PoolLs);
    const pool = await this.withClient(flags, (client) => client.listPool());
    if (flags.json) {
      this.log(JSON.stringify(pool.map((r) => ({ name: r.name, capacity: Number(formatMicros(r.capacity)), used: Number(formatMicros(r.used)) })), null, 2));
      return;
    }
    printPool(this, pool);
  }
}

export function printPool(command: { log(message: string): void }, pool: readonly PoolResource[]): void {
  if (pool.length === 0) {
    command.log('The pool is empty.');
    return;
  }
  command.log(
    renderTable(
      ['NAME', 'CAPACITY', 'USED', 'FREE'],
      pool.map((r) => [r.name, formatMicros(r.capacity), formatMicros(r.used), formatMicros(r.capacity - r.used)]),
    ),
  );
}
