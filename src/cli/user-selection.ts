/**
 * Selecting runs by who staged them: `--user NAME` and `--mine` (the
 * user runs staged from here are recorded as: FITQ_USER, else the OS
 * user), for every command that selects or lists runs.
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { checkUserName, stagerOf } from '../model/stager.js';

/** The two flags; `verb` begins their summaries ("Select", "Only"). */
export function userFlags(verb: 'Select' | 'Only') {
  const runs = verb === 'Select' ? 'Select the runs' : 'Only runs';
  return {
    user: Flags.string({ summary: `${runs} this user staged (as fitq runs shows them in USER).` }),
    mine: Flags.boolean({ summary: `${runs} you staged (FITQ_USER, else your OS user).` }),
  };
}

export interface UserFlagValues {
  user?: string | undefined;
  mine?: boolean | undefined;
}

/** The user the flags select, if any; both given is a UsageError. */
export function userFilter(flags: UserFlagValues): { user?: string } {
  if (flags.mine && flags.user !== undefined) throw new UsageError(`--mine selects your own runs: it takes no --user ${flags.user}`);
  if (flags.mine) return { user: stagerOf().user };
  return flags.user === undefined ? {} : { user: checkUserName(flags.user, '--user') };
}

/** The flags as given, for messages: ["--user alice"], ["--mine"] or []. */
export function userDescribed(flags: UserFlagValues): string[] {
  if (flags.mine) return ['--mine'];
  return flags.user === undefined ? [] : [`--user ${flags.user}`];
}
