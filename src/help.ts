/**
 * fitq's help: oclif's, with the run lifecycle on one screen after the
 * root help's commands, each line beside what a Slurm or pueue user types
 * for the same thing.
 */
import { Help } from '@oclif/core';

/** [fitq command lines, their Slurm / pueue / task-spooler counterparts]. */
export const LIFECYCLE: readonly (readonly [string, string])[] = [
  ['fitq stage -r gpu=1 --time-limit 2h -- CMD', 'sbatch -t 2:00:00 / pueue add'],
  ['fitq stage --after @ -- CMD', 'sbatch -d afterok:ID'],
  ['fitq stage --array 0-9%2 -- CMD', 'sbatch --array=0-9%2'],
  ['fitq stage --wait --follow -- CMD', 'sbatch --wait / tsp -f'],
  ['fitq stage --hold / --delay 10m -- CMD', 'sbatch -H / --begin'],
  ['fitq runs [--status staged] [--tree]', 'squeue / pueue status'],
  ['fitq runs show ID, fitq logs -f ID', 'scontrol show job / pueue follow'],
  ['fitq wait ID… | --label K=V', 'pueue wait / tsp -w'],
  ['fitq hold ID…, fitq release ID…', 'scontrol hold / release'],
  ['fitq update ID… --priority 5 -r gpu=2', 'scontrol update / pueue edit'],
  ['fitq cancel ID… | --status staged [--dry-run]', 'scancel / pueue kill'],
  ['fitq restart ID… | --status failed', 'scontrol requeue / pueue restart'],
  ['fitq pause, fitq resume', 'pueue pause / start'],
  ['fitq drain W, fitq undrain W', 'scontrol update state=drain'],
];

/** The lifecycle section as the root help prints it. */
export function lifecycleSection(): string {
  const width = Math.max(...LIFECYCLE.map(([line]) => line.length));
  const lines = LIFECYCLE.map(([line, peer]) => `  ${line.padEnd(width)}  ${peer}`);
  return ['RUN LIFECYCLE (beside: Slurm, pueue, task-spooler)', ...lines, '', 'See docs/lifecycle.md for time limits, dependencies, retries, sweeps and notifications.'].join('\n');
}

export default class FitqHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log('');
    this.log(lifecycleSection());
  }
}
