import { Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';
import { printFairShare } from './index.js';

export default class ShareSet extends FitqCommand {
  static override summary = "Set users' shares, and fair share's weights, half-life and switch.";
  static override description =
    'USER=SHARES: a user gets SHARES parts (1 without one): alice=2 bob=1 lets alice use twice what bob does before her runs come after his. ' +
    '--weight RESOURCE=W: what a second of one unit of it counts in usage (default run=1 cpu=1 gpu=10, any other resource 0; run: a running run itself). ' +
    '--half-life: how long usage takes to halve (default 7d); what was used keeps its weight and decays at the new rate from now. ' +
    'Fair share orders runs of equal priority only; higher priority still goes first, and a blocked big run is still held for. ' +
    '--preempt: a run that cannot start otherwise may preempt runs of users who have used more than their share (theirs stopped at once, unless staged with --preempt-signal), ' +
    'of a lower priority, or of its own when its user has used less; they go back to staged at their place.';
  static override usage = 'share set [USER=SHARES...] [--weight RESOURCE=W...] [--half-life DURATION] [--on|--off] [--preempt|--no-preempt]';
  static override strict = false;
  static override flags = {
    weight: Flags.string({ summary: 'What a second of one unit of a resource counts (RESOURCE=W; run=W: a running run).', multiple: true }),
    'half-life': Flags.string({ summary: 'How long usage takes to halve (e.g. 7d, 12h).' }),
    on: Flags.boolean({ summary: 'Order runs of equal priority by fair share (the default).', exclusive: ['off'] }),
    off: Flags.boolean({ summary: 'Order runs by priority and age alone (usage is still counted).', exclusive: ['on'] }),
    preempt: Flags.boolean({
      summary: "Let a user's run that cannot start otherwise preempt runs of users over their share, of its priority or lower (--no-preempt: only --preemptible runs, by priority; the default).",
      allowNo: true,
    }),
  };
  static override examples = [
    '<%= config.bin %> share set alice=2 bob=1',
    '<%= config.bin %> share set --weight gpu=20 --weight mem=0.000000001 --half-life 3d',
    '<%= config.bin %> share set --off',
  ];

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(ShareSet);
    const state = await this.withClient(flags, (client) => client.changeFairShare({
      shares: argv as string[], weights: flags.weight ?? [], halfLife: flags['half-life'],
      on: flags.on ? true : flags.off ? false : undefined,
      preempt: flags.preempt,
    }));
    printFairShare(this, state);
  }
}
