/**
 * Runs one run's command as a child process in its own process group (so the
 * whole tree can be signalled), streaming its output line by line: lines of
 * at most 16,384 characters (longer ones continue in the next), bytes that
 * are not UTF-8 replaced by U+FFFD, and read no faster than the worker can
 * store them (see run-pipes.ts), so its memory stays bounded.
 *
 * A run ends when its main process exits: whatever is left in its group is
 * killed then, and so, under the keeper (see subreaper.ts), is whatever
 * escaped the group with `setsid`. Output still in the pipes is read, but a
 * pipe held open by something that escaped is not waited for beyond
 * PIPE_DRAIN_MS: then it is closed, and the run ends anyway.
 *
 * The worker never forks: the spawn helper (spawner/) spawns the process,
 * lets it go once the helper's watchdog has its group (so it never outlives
 * its worker unobserved), reads its pipes and tells this module what happens
 * to it. If the helper dies, the run's group is killed, and its outcome says
 * its worker lost it (`lostBy`): its own end cannot be known.
 */
import type { StoredOutputFiles } from '../model/output-files.js';
import { openOutputFiles, type OutputFileWriters } from './output-files.js';
import { RunPipes } from './run-pipes.js';
import { spawnThroughHelper } from './spawner/spawner.js';
import { isDirectory, preflight, spawnFailure } from './start-failure.js';
import { keeperEnv, keeperSupport, type KeeperSupport } from './subreaper.js';
import { runCommand } from './run-command.js';
import { constants as osConstants } from 'node:os';
import { processExited } from '../model/liveness.js';

export interface RunProcessSpec {
  command: readonly string[];
  /** Run command[0] with `sh -c`. */
  shell: boolean;
  cwd: string;
  /** The complete environment of the child. */
  env: Record<string, string>;
  /** Under the keeper, when this machine has one (see subreaper.ts): what escapes the run's group is killed too. */
  reapEscaped?: boolean;
  /** Files its process writes its pid to before the command runs: it joins its cgroup (usage/run-cgroup.ts). */
  joinCgroups?: readonly string[];
  /** Files to write its stdout and stderr to as well (output-files.ts), opened before it starts. */
  output?: StoredOutputFiles;
  /** If its worker dies, its group gets SIGTERM, then SIGKILL this much later (the watchdog's grace). */
  killGraceMs: number;
  onLine: (stream: 'stdout' | 'stderr', line: string) => void;
}

export { PIPE_DRAIN_MS } from './spawner/spawner.js';

export interface RunOutcome {
  /** `returned`: never started, for want of something the worker itself lacks (see shortage.ts): put back, not failed. */
  status: 'completed' | 'failed' | 'returned';
  exitCode?: number;
  signal?: string;
  /** e.g. "exit code 2", "killed by signal SIGKILL", "command not found: foo". */
  reason: string;
  /** Set when its worker lost sight of it (its spawn helper died): why, for the run's stop. */
  lostBy?: string;
}

export interface RunProcess {
  /** The process the helper started (the command, or the keeper); undefined if it never started. */
  readonly pid: number | undefined;
  /**
   * The run's process group (its main process's pid), to be signalled: the
   * command's pid, or told by the keeper; known once the helper's watchdog
   * has it and the command runs. Undefined if it never started.
   */
  readonly group: Promise<number | undefined>;
  readonly outcome: Promise<RunOutcome>;
  /** SIGTERM (or `signal`) to the process group now, SIGKILL after graceMs if still alive (still at the keeper's gate: it never starts). */
  terminate(graceMs: number, signal?: NodeJS.Signals): void;
  /** A signal to the process group of a started run that has not exited, and nothing more; false if it was not sent. */
  signal(signal: NodeJS.Signals): boolean;
  /** SIGKILL to the process group now; false if it had exited already. */
  kill(): boolean;
  /** Whether terminate() or kill() signalled it before it exited (so its outcome is fitq's doing). */
  readonly terminated: boolean;
}

const liveProcesses = new Set<number>();

/** How many run processes started here are still running (tests assert none leak). */
export function liveRunProcessCount(): number {
  return liveProcesses.size;
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** The outcome of a wait status as the keeper reports it (`status N`). */
function waitStatusOutcome(status: number): RunOutcome {
  const signalNumber = status & 0x7f;
  if (signalNumber !== 0) {
    const signal = Object.entries(osConstants.signals).find(([, number]) => number === signalNumber)?.[0] ?? `signal ${signalNumber}`;
    return { status: 'failed', signal, reason: `killed by signal ${signal}` };
  }
  const code = (status >> 8) & 0xff;
  return code === 0 ? { status: 'completed', exitCode: 0, reason: 'exit code 0' } : { status: 'failed', exitCode: code, reason: `exit code ${code}` };
}

/** How long a run whose helper died is waited for to be gone, once its group is killed, at most. */
const LOST_GROUP_WAIT_MS = 2000;

/** Whether any process of group `group` is left. */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves once group `group` is gone (its processes reparented and reaped), or after LOST_GROUP_WAIT_MS. */
async function groupGone(group: number): Promise<void> {
  const until = performance.now() + LOST_GROUP_WAIT_MS;
  while (groupAlive(group) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Starts the run's process at its gate; resolves once it is spawned (or could not be), its output files open. */
export async function startRunProcess(spec: RunProcessSpec): Promise<RunProcess> {
  const [file = '', ...args] = spec.shell ? ['sh', '-c', spec.command.join(' ')] : spec.command;
  const notStarted = (failure: RunOutcome | Promise<RunOutcome>): RunProcess => ({
    pid: undefined,
    group: Promise.resolve(undefined),
    outcome: Promise.resolve(failure),
    terminate: () => {},
    signal: () => false,
    kill: () => false,
    terminated: false,
  });
  // Spawning in a missing directory fails with ENOENT too: say which is missing.
  if (!isDirectory(spec.cwd)) return notStarted({ status: 'failed', reason: `working directory not found: ${spec.cwd}` });
  const failure = preflight(file, spec.cwd, spec.env);
  if (failure) return notStarted(failure);
  let files: OutputFileWriters | undefined;
  if (spec.output) {
    const opened = await openOutputFiles(spec.output);
    if ('failure' in opened) return notStarted({ status: opened.shortage ? 'returned' : 'failed', reason: opened.failure });
    files = opened;
  }
  const keeper: KeeperSupport = spec.reapEscaped ? keeperSupport() : { ok: false, why: 'not asked for' };
  const spawned = runCommand(file, args, spec.joinCgroups ?? [], keeper);

  let pid: number | undefined;
  /** What the keeper told: the run's group, and the main process's wait status. */
  let groupId: number | undefined;
  let keeperStatus: number | undefined;
  let tellGroup: (group: number | undefined) => void = () => {};
  const group = new Promise<number | undefined>((resolve) => (tellGroup = resolve));
  let killTimer: NodeJS.Timeout | undefined;
  /** Whether its main process had exited when it was terminated (processExited). */
  let exitedFirst = false;
  let killed = false;
  let exited = false;
  /** Whether the command runs (its group is known): before, under the keeper, it waits at the gate. */
  let released = false;
  let settled = false;
  let settle: (outcome: RunOutcome) => void = () => {};
  const outcome = new Promise<RunOutcome>((resolve) => (settle = resolve));
  let spawnedOrNot: (started: boolean) => void = () => {};
  const spawnAnswered = new Promise<boolean>((resolve) => (spawnedOrNot = resolve));

  // Settles once the process has exited and its output has been read to the end (or PIPE_DRAIN_MS later).
  const ended = (result: RunOutcome) => {
    if (settled) return;
    settled = true;
    if (killTimer) clearTimeout(killTimer);
    if (pid !== undefined) liveProcesses.delete(pid);
    tellGroup(undefined);
    pipes.close();
    if (files) void files.close().then(() => settle(result));
    else settle(result);
  };
  const pipes = new RunPipes(files, spec.onLine, () => exited, {
    pause: (stream) => helper.pause(stream),
    resume: (stream) => helper.resume(stream),
  });
  const request = {
    ...spawned,
    cwd: spec.cwd,
    env: keeper.ok ? keeperEnv(spec.env) : spec.env,
    toldGroup: keeper.ok,
    graceSeconds: Math.ceil(spec.killGraceMs / 1000),
  };
  const helper = spawnThroughHelper(request, {
    spawned(spawnedPid) {
      pid = spawnedPid;
      liveProcesses.add(spawnedPid);
      if (!keeper.ok) {
        groupId = spawnedPid;
        released = true;
        tellGroup(spawnedPid);
      }
      spawnedOrNot(true);
    },
    failed(code, message) {
      ended(spawnFailure(code, file, spec.cwd, message));
      spawnedOrNot(false);
    },
    group(told) {
      if (groupId !== undefined) return;
      groupId = told;
      released = true;
      tellGroup(told);
    },
    status(status) {
      keeperStatus = status;
    },
    output: (stream, chunk) => pipes.data(stream, chunk),
    exit() {
      exited = true;
    },
    close(code, signal) {
      // Under the keeper, the main process's own end, as the keeper saw it.
      if (keeperStatus !== undefined) ended(waitStatusOutcome(keeperStatus));
      else if (keeper.ok && !released) ended({ status: 'failed', reason: 'terminated before it started' });
      else if (keeper.ok && !signal) ended({ status: 'failed', reason: `its end was not reported (keeper exit code ${code})` });
      else if (signal) ended({ status: 'failed', signal, reason: `killed by signal ${signal}` });
      else if (code === 0) ended({ status: 'completed', exitCode: 0, reason: 'exit code 0' });
      else ended({ status: 'failed', exitCode: code ?? 0, reason: `exit code ${code}` });
    },
    lost(why) {
      spawnedOrNot(pid !== undefined);
      const lostBy = `lost its spawn helper (${why})`;
      // At the keeper's gate: it closed with the helper, so it never starts. Otherwise it may run (a plain
      // run whose spawn was not confirmed too, which the helper's watchdog ends): its end cannot be known.
      if (keeper.ok && !released) {
        ended({ status: 'returned', reason: lostBy });
        return;
      }
      killed = true;
      const target = groupId;
      if (target !== undefined && !exited) signalGroup(target, 'SIGKILL');
      void (target === undefined ? Promise.resolve() : groupGone(target)).then(() =>
        ended({ status: 'failed', reason: lostBy, lostBy }),
      );
    },
  });
  if (!(await spawnAnswered)) return notStarted(outcome);

  /** Before the go-ahead under the keeper: close the gate, so the command never starts. */
  const closeGate = (): boolean => {
    if (!keeper.ok || released) return false;
    helper.closeGate();
    return true;
  };

  return {
    pid,
    group,
    outcome,
    terminate(graceMs: number, signal: NodeJS.Signals = 'SIGTERM') {
      // Once it has exited, its group id may belong to someone else (the helper checks again).
      if (killTimer || exited || settled) return;
      if (closeGate()) {
        killed = true;
        return;
      }
      if (groupId === undefined) return;
      // Exited on its own, its end still on its way from the helper (the kernel knows at once):
      // what it left behind is signalled, it is not terminated.
      exitedFirst = processExited(groupId);
      helper.signal(signal);
      killTimer = setTimeout(() => helper.signal('SIGKILL'), graceMs);
      killTimer.unref();
    },
    signal(signal: NodeJS.Signals) {
      if (exited || settled || !released || groupId === undefined) return false;
      helper.signal(signal);
      return true;
    },
    kill() {
      if (exited || settled) return false;
      killed = true;
      if (closeGate()) return true;
      if (groupId !== undefined) helper.signal('SIGKILL');
      return true;
    },
    get terminated() {
      return (killTimer !== undefined && !exitedFirst) || killed;
    },
  };
}
