/**
 * Whether a process has exited, as the kernel tells it now: its /proc entry
 * is gone (reaped) or it is a zombie (exited, not yet reaped). What a
 * worker's own bookkeeping learns later, through its spawn helper, the
 * kernel knows at once: a run that exited on its own just before its
 * worker terminated it is not counted as terminated.
 */
import { readFileSync } from 'node:fs';

export function hasExited(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  // The state is the field after the name, which is in parentheses and may hold anything.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}
