/**
 * `fitq stage --time-limit` and `--time-signal`: the flags and their parsing
 * (the syntax lives in units/duration.ts).
 */
import { Flags } from '@oclif/core';
import { parseTimeLimit, parseTimeSignal, type TimeSignal } from '../units/duration.js';
import { printWarning } from './format.js';

export const timeFlags = {
  'time-limit': Flags.string({
    summary: 'Time limit: 2h30m, 90s, HH:MM:SS, D-HH:MM:SS or seconds; past it the run is signalled, killed after the worker\'s grace, and ends timeout.',
    description:
      "Slurm's forms MM:SS, HH:MM:SS, D-HH, D-HH:MM and D-HH:MM:SS mean what they do in Slurm, but a bare number is seconds (Slurm's -t 30 is minutes: write 30m), said in a warning. " +
      'A worker with --max-time-limit below it never claims the run.',
  }),
  'time-signal': Flags.string({
    summary: 'Signal the run gets, and how long before its time limit: SIGUSR1@120s. Default: SIGTERM at the limit.',
    description: 'Given ahead of the limit, the run still gets SIGTERM at the limit and SIGKILL after the grace, unless it ended on its own.',
  }),
};

/** The time limit (ms) and signal of the stage request, checked before connecting. */
export function parseTimeFlags(flags: { 'time-limit'?: string | undefined; 'time-signal'?: string | undefined }): {
  timeLimit?: number;
  timeSignal?: TimeSignal;
} {
  return {
    ...(flags['time-limit'] !== undefined ? { timeLimit: parseTimeLimit('--time-limit', flags['time-limit'], printWarning) } : {}),
    ...(flags['time-signal'] !== undefined ? { timeSignal: parseTimeSignal('--time-signal', flags['time-signal']) } : {}),
  };
}
