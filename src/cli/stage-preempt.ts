/**
 * `fitq stage --preemptible`, `--preempt-signal` and `--preempt-after`: the
 * flags and their parsing (the terms are checked in model/preemption.ts).
 */
import { Flags } from '@oclif/core';
import { preemptFields, type PreemptRequest } from '../model/preemption.js';

export const preemptFlags = {
  preemptible: Flags.boolean({
    summary: 'A higher-priority run that cannot start otherwise may stop this one; it goes back to staged at its place, no retry spent.',
    description:
      'Its next start has FITQ_PREEMPTED=1 and FITQ_ATTEMPT in its environment, so it can resume from its checkpoint. ' +
      '--preempt-signal and --preempt-after imply it.',
  }),
  'preempt-signal': Flags.string({
    summary: "Signal it gets when preempted, and its grace before it is stopped: SIGUSR1@60s (as Slurm's --signal). Default: SIGTERM, stopped at once.",
  }),
  'preempt-after': Flags.string({
    summary: 'It is never preempted before it has run this long: 10m, 1h (as Slurm\'s PreemptExemptTime).',
  }),
};

/** The stage request's preemption, checked before connecting. */
export function parsePreemptFlags(flags: {
  preemptible?: boolean | undefined;
  'preempt-signal'?: string | undefined;
  'preempt-after'?: string | undefined;
}): PreemptRequest {
  const request: PreemptRequest = {
    ...(flags.preemptible ? { preemptible: true } : {}),
    ...(flags['preempt-signal'] !== undefined ? { preemptSignal: flags['preempt-signal'] } : {}),
    ...(flags['preempt-after'] !== undefined ? { preemptAfter: flags['preempt-after'] } : {}),
  };
  preemptFields(request);
  return request;
}
