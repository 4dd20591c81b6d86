/**
 * Runs one run's command as a child process in its own process group (so the
 * whole tree can be signalled), streaming its output line by line.
 */
import { statSync } from 'node:fs';
import { execa, type ResultPromise } from 'execa';
import { LineSplitter } from './line-splitter.js';

export interface RunProcessSpec {
  command: readonly string[];
  /** Run command[0] with `sh -c`. */
  shell: boolean;
  cwd: string;
  /** The complete environment of the child. */
  env: Record<string, string>;
  onLine: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface RunOutcome {
  status: 'completed' | 'failed';
  exitCode?: number;
  signal?: string;
  /** e.g. "exit code 2", "killed by signal SIGKILL", "command not found: foo". */
  reason: string;
}

export interface RunProcess {
  /** The child's pid, which is also its process group id; undefined if it never started. */
  readonly pid: number | undefined;
  readonly outcome: Promise<RunOutcome>;
  /** SIGTERM to the process group now, SIGKILL after graceMs if still alive. */
  terminate(graceMs: number): void;
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

function spawnFailure(code: string | undefined, file: string, message: string): RunOutcome {
  if (code === 'ENOENT') return { status: 'failed', reason: `command not found: ${file}` };
  if (code === 'EACCES') return { status: 'failed', reason: `permission denied: ${file}` };
  return { status: 'failed', reason: `could not start ${file}: ${message}` };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function startRunProcess(spec: RunProcessSpec): RunProcess {
  const [file = '', ...args] = spec.shell ? ['sh', '-c', spec.command.join(' ')] : spec.command;
  // Spawning in a missing directory fails with ENOENT too: say which is missing.
  if (!isDirectory(spec.cwd)) {
    const outcome = Promise.resolve<RunOutcome>({ status: 'failed', reason: `working directory not found: ${spec.cwd}` });
    return { pid: undefined, outcome, terminate: () => {} };
  }
  const subprocess: ResultPromise = execa(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    extendEnv: false,
    detached: true,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  const pid = subprocess.pid;
  if (pid !== undefined) liveProcesses.add(pid);

  for (const stream of ['stdout', 'stderr'] as const) {
    const splitter = new LineSplitter();
    const readable = subprocess[stream];
    readable?.on('data', (chunk: Buffer) => splitter.push(chunk).forEach((line) => spec.onLine(stream, line)));
    readable?.on('end', () => splitter.end().forEach((line) => spec.onLine(stream, line)));
  }

  let killTimer: NodeJS.Timeout | undefined;
  let exited = false;
  // When the main process exits, whatever it left in its group goes too:
  // the run's resources are released, so nothing of it may keep using them.
  subprocess.once('exit', () => {
    exited = true;
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  });

  const outcome = subprocess.then((result): RunOutcome => {
    if (killTimer) clearTimeout(killTimer);
    if (pid !== undefined) liveProcesses.delete(pid);
    if (pid === undefined || (result.failed && result.exitCode === undefined && !result.signal)) {
      return spawnFailure(result.code, file, result.originalMessage ?? result.shortMessage ?? 'unknown error');
    }
    if (result.signal) return { status: 'failed', signal: result.signal, reason: `killed by signal ${result.signal}` };
    const exitCode = result.exitCode ?? 0;
    return exitCode === 0
      ? { status: 'completed', exitCode, reason: 'exit code 0' }
      : { status: 'failed', exitCode, reason: `exit code ${exitCode}` };
  });

  return {
    pid,
    outcome,
    terminate(graceMs: number) {
      // Once it has exited, its group id may belong to someone else.
      if (pid === undefined || killTimer || exited) return;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      killTimer.unref();
    },
  };
}
