import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { renderTable } from '../../cli/format.js';
import type { FairShareState } from '../../model/fair-share.js';
import { formatDurationSpec } from '../../units/duration.js';

export default class Share extends FitqCommand {
  static override summary = "Show fair share: users' decayed usage, their shares, and the order the claim puts them in.";
  static override description =
    'Among runs of equal priority, workers start first the runs of the user who has used least of their share: ' +
    'decayed usage (weighted resource-seconds, halving every half-life) over share. USED is how much of their share a user has used ' +
    '(their part of all usage over their part of the shares: 1 is all of it). ORDER is their place (1 first; users alike share one; ' +
    'a user with no usage yet comes first). Set it with fitq share set.';
  static override examples = ['<%= config.bin %> share', '<%= config.bin %> share --json'];
  static override flags = { json: Flags.boolean({ summary: 'Print fair share as JSON.' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(Share);
    const state = await this.withClient(flags, (client) => client.fairShare());
    if (flags.json) {
      this.log(JSON.stringify(fairShareJson(state), null, 2));
      return;
    }
    printFairShare(this, state);
  }
}

/** Fair share as `fitq share --json` prints it. */
function fairShareJson(state: FairShareState): Record<string, unknown> {
  return {
    on: state.on,
    preempt: state.preempt,
    halfLifeMs: state.halfLifeMs,
    weights: Object.fromEntries(state.weights),
    users: state.users.map(({ user, usage, share, used, rank, rate }) => ({ user, usage, share, used, order: rank + 1, rate })),
  };
}

const figure = (value: number): string => (value === 0 ? '0' : value >= 100 ? value.toFixed(0) : String(Number(value.toPrecision(3))));

/** A line of settings, then USER, SHARE, USAGE, USED, ORDER, RUNNING (what their running runs add per second). */
export function printFairShare(command: { log(message: string): void }, state: FairShareState): void {
  const weights = [...state.weights].filter(([, weight]) => weight > 0).map(([name, weight]) => `${name}=${weight}`).join(' ');
  command.log(`fair share ${state.on ? 'on' : 'off (runs go by priority and age)'}${state.preempt ? '; preempts runs of users over their share' : ''}; half-life ${formatDurationSpec(state.halfLifeMs)}; weights per second: ${weights || 'none'}`);
  if (state.users.length === 0) {
    command.log('No usage yet, and no share set (fitq share set alice=2 bob=1).');
    return;
  }
  command.log(renderTable(
    ['USER', 'SHARE', 'USAGE', 'USED', 'ORDER', 'RUNNING'],
    state.users.map(({ user, share, usage, used, rank, rate }) => [user, String(share), figure(usage), `${figure(used)}×`, String(rank + 1), rate > 0 ? `+${figure(rate)}/s` : '']),
  ));
}
