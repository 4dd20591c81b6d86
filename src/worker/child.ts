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
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { StoredOutputFiles } from '../model/output-files.js';
import { LineSplitter } from './line-splitter.js';
import { openOutputFiles, type OutputFileWriters } from './output-files.js';
import { readRunPipes } from './run-pipes.js';
import { descriptorShortage } from './shortage.js';
import { isDirectory, preflight, spawnFailure } from './start-failure.js';
import { KEEPER_SCRIPT, keeperEnv, keeperSupport, type KeeperSupport } from './subreaper.js';
import { constants as osConstants } from 'node:os';

export interface RunProcessSpec {
  command: readonly string[];
  /** Run command[0] with `sh -c`. */
  shell: boolean;
  cwd: string;
  /** The complete environment of the child. */
  env: Record<string, string>;
  /** Under the keeper, when this machine has one (see subreaper.ts): what escapes the run's group is killed too. */
  reapEscaped?: boolean;
  /** Files to write its stdout and stderr to as well (output-files.ts), opened before it starts. */
  output?: StoredOutputFiles;
  onLine: (stream: 'stdout' | 'stderr', line: string) => void;
}

/** How long a run's output pipes are read after its main process has exited, at most. */
export const PIPE_DRAIN_MS = 1000;

export interface RunOutcome {
  /** `returned`: never started, for want of something the worker itself lacks (see shortage.ts): put back, not failed. */
  status: 'completed' | 'failed' | 'returned';
  exitCode?: number;
  signal?: string;
  /** e.g. "exit code 2", "killed by signal SIGKILL", "command not found: foo". */
  reason: string;
}

export interface RunProcess {
  /** The process the worker started (the gate, or the keeper); undefined if it never started. */
  readonly pid: number | undefined;
  /**
   * The run's process group (its main process's pid), to be signalled and
   * watched: known at once with the plain gate, told by the keeper; undefined
   * if it never started.
   */
  readonly group: Promise<number | undefined>;
  /**
   * Lets the command run. Until then the child waits at a gate, so a worker
   * that dies before its watchdog knows the process group never leaves a run
   * behind: the gate's pipe closes with the worker and the child just exits.
   */
  release(): void;
  readonly outcome: Promise<RunOutcome>;
  /** SIGTERM (or `signal`) to the process group now, SIGKILL after graceMs if still alive (not released yet: it never starts). */
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

/** Waits for a line on fd 3 (the worker's go-ahead), then becomes the command. */
const GATE = 'IFS= read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';

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

/** Starts the run's process at its gate; resolves once it is spawned (or could not be), its output files open. */
export async function startRunProcess(spec: RunProcessSpec): Promise<RunProcess> {
  const [file = '', ...args] = spec.shell ? ['sh', '-c', spec.command.join(' ')] : spec.command;
  const notStarted = (failure: RunOutcome | Promise<RunOutcome>): RunProcess => ({
    pid: undefined,
    group: Promise.resolve(undefined),
    outcome: Promise.resolve(failure),
    release: () => {},
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
  // Checked right before spawning, in the same turn of the event loop as the spawn.
  const shortage = descriptorShortage();
  if (shortage !== undefined) {
    await files?.close();
    return notStarted({ status: 'returned', reason: shortage });
  }
  const keeper: KeeperSupport = spec.reapEscaped ? keeperSupport() : { ok: false, why: 'not asked for' };
  // node:child_process directly: a run needs none of execa's conveniences
  // here (no buffering, no transforms), and skipping them saves the worker's
  // main thread about a tenth of its time per run (npm run bench).
  let subprocess: ChildProcess;
  try {
    subprocess = keeper.ok
      ? spawn('perl', ['-e', KEEPER_SCRIPT, '--', String(keeper.prctl), file, ...args], {
          cwd: spec.cwd,
          env: keeperEnv(spec.env),
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        })
      : spawn('sh', ['-c', GATE, 'fitq-run', file, ...args], {
          cwd: spec.cwd,
          env: spec.env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        });
  } catch (error) {
    // Node throws the spawn failures it does not report as an 'error' event.
    const { code, message } = error as NodeJS.ErrnoException;
    void files?.close();
    return notStarted(spawnFailure(code, file, spec.cwd, message));
  }
  if (subprocess.pid === undefined) {
    // Node says why in an 'error' event; out of descriptors (EMFILE), before it set up any pipe.
    const failed = new Promise<RunOutcome>((resolve) =>
      subprocess.once('error', (error: NodeJS.ErrnoException) => resolve(spawnFailure(error.code, file, spec.cwd, error.message))),
    );
    return notStarted(failed.then(async (failure) => {
      await files?.close();
      return failure;
    }));
  }
  // Node makes fd 3 a socket pair: the gate, and what the keeper tells.
  const gate = subprocess.stdio[3] as (Writable & Readable) | null;
  gate?.on('error', () => {}); // the child may be gone already (terminated at the gate)
  const pid = subprocess.pid;
  if (pid !== undefined) liveProcesses.add(pid);

  /** What the keeper told: the run's group, and the main process's wait status. */
  let groupId: number | undefined = keeper.ok ? undefined : pid;
  let keeperStatus: number | undefined;
  let tellGroup: (group: number | undefined) => void = () => {};
  const group = new Promise<number | undefined>((resolve) => {
    if (!keeper.ok || pid === undefined) resolve(pid);
    else tellGroup = resolve;
  });
  if (keeper.ok && gate) {
    const told = new LineSplitter();
    gate.on('data', (chunk: Buffer) => {
      for (const line of told.push(chunk)) {
        const [word, value] = line.split(' ');
        if (word === 'group' && groupId === undefined) {
          groupId = Number(value);
          tellGroup(groupId);
        } else if (word === 'status') keeperStatus = Number(value);
      }
    });
  }

  let killTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let killed = false;
  let exited = false;
  let released = false;
  const readables: (Readable | null)[] = [subprocess.stdout, subprocess.stderr];
  readRunPipes(readables, files, spec.onLine, () => exited);

  // When the main process exits, whatever it left in its group goes too:
  // the run's resources are released, so nothing of it may keep using them.
  // (The keeper did that, and more, before it exited.)
  subprocess.once('exit', () => {
    exited = true;
    if (groupId !== undefined) signalGroup(groupId, 'SIGKILL');
    for (const readable of readables) readable?.resume();
    // Something that escaped the group may hold the pipes open: read what is
    // there, but do not wait for it.
    drainTimer = setTimeout(() => {
      for (const readable of readables) readable?.destroy();
      gate?.destroy();
    }, PIPE_DRAIN_MS);
    drainTimer.unref();
  });

  // Settles once the process has exited and its output has been read to the end (or PIPE_DRAIN_MS later).
  const outcome = new Promise<RunOutcome>((settle) => {
    const ended = (outcome: RunOutcome) => {
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      if (pid !== undefined) liveProcesses.delete(pid);
      tellGroup(undefined);
      if (files) void files.close().then(() => settle(outcome));
      else settle(outcome);
    };
    subprocess.once('error', (error: NodeJS.ErrnoException) => {
      // Spawning failed (no 'close' follows when it never started).
      if (pid === undefined) ended(spawnFailure(error.code, file, spec.cwd, error.message));
    });
    subprocess.once('close', (code, signal) => {
      if (pid === undefined) return; // its 'error' says why it never started
      // Under the keeper, the main process's own end, as the keeper saw it.
      if (keeperStatus !== undefined) ended(waitStatusOutcome(keeperStatus));
      else if (keeper.ok && !released) ended({ status: 'failed', reason: 'terminated before it started' });
      else if (keeper.ok && !signal) ended({ status: 'failed', reason: `its end was not reported (keeper exit code ${code})` });
      else if (signal) ended({ status: 'failed', signal, reason: `killed by signal ${signal}` });
      else if (code === 0) ended({ status: 'completed', exitCode: 0, reason: 'exit code 0' });
      else ended({ status: 'failed', exitCode: code ?? 0, reason: `exit code ${code}` });
    });
  });

  /** Before the go-ahead under the keeper: close the gate, so the command never starts. */
  const closeGate = (): boolean => {
    if (!keeper.ok || released) return false;
    gate?.destroy();
    return true;
  };

  return {
    pid,
    group,
    outcome,
    release() {
      released = true;
      // The plain gate's socket may close; the keeper's stays open to tell the end.
      if (keeper.ok) gate?.write('go\n');
      else gate?.end('go\n');
    },
    terminate(graceMs: number, signal: NodeJS.Signals = 'SIGTERM') {
      // Once it has exited, its group id may belong to someone else.
      if (pid === undefined || killTimer || exited) return;
      if (closeGate()) {
        killed = true;
        return;
      }
      const target = groupId;
      if (target === undefined) return;
      signalGroup(target, signal);
      killTimer = setTimeout(() => signalGroup(target, 'SIGKILL'), graceMs);
      killTimer.unref();
    },
    signal(signal: NodeJS.Signals) {
      if (pid === undefined || exited || !released || groupId === undefined) return false;
      signalGroup(groupId, signal);
      return true;
    },
    kill() {
      if (pid === undefined || exited) return false;
      killed = true;
      if (closeGate()) return true;
      if (groupId !== undefined) signalGroup(groupId, 'SIGKILL');
      return true;
    },
    get terminated() {
      return killTimer !== undefined || killed;
    },
  };
}
