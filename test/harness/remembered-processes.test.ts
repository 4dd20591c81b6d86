/**
 * The tests' own cleanup: a process or process group remembered to be
 * killed after a test is killed only while its id still names it. Ids come
 * round (pid_max is often 32768), and a blind kill of a remembered id once
 * could end another test's process. Real processes, started detached as
 * runs and watchdogs are.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, killRememberedGroup, killRememberedProcess, rememberGroup, rememberProcess } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

const started: ChildProcess[] = [];
afterEach(() => started.splice(0).forEach((child) => child.kill('SIGKILL')));

function groupLeader(): number {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  started.push(child);
  return child.pid!;
}

describe('killing what a test remembered', () => {
  it('kills the group and the process it remembered', async () => {
    const group = groupLeader();
    killRememberedGroup(rememberGroup(group));
    await waitFor('the remembered group to be killed', () => !isAlive(group));
    const single = groupLeader();
    killRememberedProcess(rememberProcess(single));
    await waitFor('the remembered process to be killed', () => !isAlive(single));
  });

  it('leaves alone a process that now holds a remembered id (another start time)', async () => {
    const pid = groupLeader();
    const child = started.at(-1)!;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const remembered = rememberGroup(pid);
    // As if the remembered process had ended and its id come round to this one.
    const stale = { pgid: pid, startedAt: String(Number(remembered.startedAt) - 1) };
    killRememberedGroup(stale);
    killRememberedProcess(stale);
    // Had either killed it, SIGKILL would have ended it before this SIGTERM.
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM');
  });
});
