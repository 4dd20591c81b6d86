/** What `fitq hold` and `fitq release` share: selecting the runs and saying what happened to each. */
import { Args, Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import type { HoldResult } from '../queue/hold.js';
import { FitqCommand, inBatches, parseKeyValues } from './base-command.js';

export abstract class HoldCommand extends FitqCommand {
  static override strict = false;
  static override args = { ids: Args.string({ description: 'Run ids, or unique prefixes of them.' }) };
  static override flags = {
    label: Flags.string({ multiple: true, multipleNonGreedy: true, summary: 'Select the runs with this KEY=VALUE label (repeatable: all must match).' }),
    json: Flags.boolean({ summary: 'Print what happened to each run as a JSON array.' }),
  };

  protected abstract readonly mode: 'hold' | 'release';

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(this.constructor as typeof HoldCommand);
    const ids = argv as string[];
    const labels = parseKeyValues('--label', flags.label);
    const selecting = flags.label !== undefined;
    if (ids.length === 0 && !selecting) throw new UsageError(`name the runs to ${this.mode}, or select them with --label`);
    const results: HoldResult[] = await this.withClient(flags, async (client) => {
      // --label: the staged runs to hold, or the held runs to release.
      const selected = await client.selectRunIds(ids, selecting ? { statuses: [this.mode === 'hold' ? 'staged' : 'held'], labels } : undefined);
      return this.mode === 'hold' ? client.holdRuns(selected) : client.releaseRuns(selected);
    });
    if (flags.json) this.log(JSON.stringify(results, null, 2));
    else if (results.length === 0) this.log('No runs.');
    else for (const result of results) this.log(result.message);
    // A run refused (not staged) is an error the caller can test for.
    if (results.some((result) => result.outcome === 'refused')) process.exitCode = 1;
  }

  protected override tooManyWordsMessage(count: number): string {
    return `${super.tooManyWordsMessage(count)}: select the runs with --label, or name them ${inBatches(this.mode)}`;
  }
}
