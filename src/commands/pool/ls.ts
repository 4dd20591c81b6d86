import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { renderTable } from '../../cli/format.js';
import type { PoolResource } from '../../operations/pools.js';
import { formatMicros } from '../../resources/amount.js';

export default class PoolLs extends FitqCommand {
  static override summary = "List the namespace's pool resources (capacity, used, free), then the limits of arrays.";
  static override examples = ['<%= config.bin %> pool ls', '<%= config.bin %> pool ls --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print the pool as JSON.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(PoolLs);
    const pool = await this.withClient(flags, (client) => client.listPool());
    if (flags.json) {
      this.log(JSON.stringify(pool.map(poolJson), null, 2));
      return;
    }
    printPool(this, pool);
  }
}

/** A pool resource as `fitq pool ls --json` prints it (an array's limit with its array and how its runs stand). */
function poolJson(resource: PoolResource): Record<string, unknown> {
  const { name, capacity, used, array } = resource;
  return {
    name,
    capacity: Number(formatMicros(capacity)),
    used: Number(formatMicros(used)),
    ...(array === undefined ? {} : { array: array.id, running: array.running, staged: array.staged }),
  };
}

/** The pool's resources in a table, then the limits of arrays under their own heading. */
export function printPool(command: { log(message: string): void }, pool: readonly PoolResource[]): void {
  const shared = pool.filter((resource) => resource.array === undefined);
  const limits = pool.filter((resource) => resource.array !== undefined);
  if (shared.length === 0 && limits.length === 0) {
    command.log('The pool is empty.');
    return;
  }
  const parts: string[] = [];
  if (shared.length > 0) {
    parts.push(renderTable(
      ['NAME', 'CAPACITY', 'USED', 'FREE'],
      shared.map((r) => [r.name, formatMicros(r.capacity), formatMicros(r.used), formatMicros(r.capacity - r.used)]),
    ));
  }
  if (limits.length > 0) {
    parts.push(`Array limits (fitq stage --array LIST%N):\n${renderTable(
      ['ARRAY', 'LIMIT', 'RUNNING', 'STAGED'],
      limits.map((r) => [r.array!.id, formatMicros(r.capacity), String(r.array!.running), String(r.array!.staged)]),
    )}`);
  }
  command.log(parts.join('\n\n'));
}
