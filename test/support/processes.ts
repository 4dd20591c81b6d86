/** Whether test processes are still there, read from the kernel. */
import { readFileSync } from 'node:fs';

/** True while `pid` is a running process: not gone, and not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // Gone since the signal check; without /proc, the signal check is all there is.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' || !process.platform.startsWith('linux');
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state !== 'Z' && state !== 'X';
}
