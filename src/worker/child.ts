/**
 * Runs one run's command as a child process in its own process group (so the
 * whole tree can be signalled), streaming its output line by line: lines of
 * at most 16,384 characters (longer ones continue in the next), bytes that
 * are not UTF-8 replaced by U+FFFD, and read no faster than the worker can
 * store them (see waitForOutputRoom), so its memory stays bounded.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { execa } from 'execa';
import { oneLine } from '../queue/names.js';
import { LineSplitter } from './line-splitter.js';
import { waitForOutputRoom } from './output.js';

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
  /**
   * Lets the command run. Until then the child waits at a gate, so a worker
   * that dies before its watchdog knows the process group never leaves a run
   * behind: the gate's pipe closes with the worker and the child just exits.
   */
  release(): void;
  readonly outcome: Promise<RunOutcome>;
  /** SIGTERM to the process group now, SIGKILL after graceMs if still alive. */
  terminate(graceMs: number): void;
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

/** Why a command could not start, in the words of a shell: "command not found: foo". */
function spawnFailure(code: string | undefined, command: string, cwd: string, message: string): RunOutcome {
  // A name without a slash is looked up in PATH; a path is relative to the run's directory.
  const path = command.includes('/') ? resolve(cwd, command) : undefined;
  // Shown in logs and tables: on one line, whatever the name holds.
  const file = oneLine(command);
  if (path !== undefined && isDirectory(path)) return { status: 'failed', reason: `is a directory: ${file}` };
  if (code === 'ENOENT') {
    // The file is there, so what is missing is what runs it.
    if (path !== undefined && existsSync(path)) {
      const interpreter = scriptInterpreter(path);
      if (interpreter) return { status: 'failed', reason: `bad interpreter: ${file} (${oneLine(interpreter)} not found)` };
      return { status: 'failed', reason: `could not start ${file}: its interpreter or dynamic loader was not found` };
    }
    return { status: 'failed', reason: `command not found: ${file}` };
  }
  if (code === 'EACCES') return { status: 'failed', reason: `permission denied: ${file}` };
  return { status: 'failed', reason: `could not start ${file}: ${message}` };
}

/** The `#!` interpreter of a script, as written (a stray \r of a CRLF script included). */
function scriptInterpreter(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(256);
    const text = head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString('utf8');
    const match = /^#![ \t]*([^ \t\n]+)/.exec(text);
    return match?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Why the command could not be started, found before spawning (the gate
 * below runs it with `exec`, whose failure would only be an exit code): a
 * name looked up in PATH, or a path, that is missing, not executable, a
 * directory, or a script whose interpreter is missing.
 */
function preflight(file: string, cwd: string, env: Record<string, string>): RunOutcome | undefined {
  if (!file.includes('/')) {
    const candidates = (env.PATH ?? '').split(':').map((dir) => resolve(cwd, dir || '.', file));
    if (candidates.some(isExecutableFile)) return undefined;
    const present = candidates.some((path) => existsSync(path) && !isDirectory(path));
    return spawnFailure(present ? 'EACCES' : 'ENOENT', file, cwd, '');
  }
  const path = resolve(cwd, file);
  if (!existsSync(path)) return spawnFailure('ENOENT', file, cwd, '');
  if (isDirectory(path)) return spawnFailure('EISDIR', file, cwd, '');
  if (!isExecutableFile(path)) return spawnFailure('EACCES', file, cwd, '');
  const interpreter = scriptInterpreter(path);
  if (interpreter !== undefined && isAbsolute(interpreter) && !isExecutableFile(interpreter)) return spawnFailure('ENOENT', file, cwd, '');
  return undefined;
}

/** Waits for a line on fd 3 (the worker's go-ahead), then becomes the command. */
const GATE = 'IFS= read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';

export function startRunProcess(spec: RunProcessSpec): RunProcess {
  const [file = '', ...args] = spec.shell ? ['sh', '-c', spec.command.join(' ')] : spec.command;
  const notStarted = (failure: RunOutcome): RunProcess => ({
    pid: undefined,
    outcome: Promise.resolve(failure),
    release: () => {},
    terminate: () => {},
    kill: () => false,
    terminated: false,
  });
  // Spawning in a missing directory fails with ENOENT too: say which is missing.
  if (!isDirectory(spec.cwd)) return notStarted({ status: 'failed', reason: `working directory not found: ${spec.cwd}` });
  const failure = preflight(file, spec.cwd, spec.env);
  if (failure) return notStarted(failure);
  const subprocess = execa('sh', ['-c', GATE, 'fitq-run', file, ...args], {
    cwd: spec.cwd,
    env: spec.env,
    extendEnv: false,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  // Node makes fd 3 a socket pair, writable from this side (execa types it as output).
  const gate = subprocess.stdio[3] as unknown as NodeJS.WritableStream | undefined;
  gate?.on('error', () => {}); // the child may be gone already (terminated at the gate)
  const pid = subprocess.pid;
  if (pid !== undefined) liveProcesses.add(pid);

  let killTimer: NodeJS.Timeout | undefined;
  let killed = false;
  let exited = false;
  const readables = [subprocess.stdout, subprocess.stderr];
  for (const [index, stream] of (['stdout', 'stderr'] as const).entries()) {
    const splitter = new LineSplitter();
    const readable = readables[index];
    readable?.on('data', (chunk: Buffer) => {
      splitter.push(chunk).forEach((line) => spec.onLine(stream, line));
      // Too much output waiting to be stored: stop reading (the run blocks
      // writing, as on a full pipe) until there is room again. Once the
      // process has exited, what is left in the pipe is read at once.
      const room = exited ? undefined : waitForOutputRoom();
      if (room) {
        readable.pause();
        void room.then(() => readable.resume());
      }
    });
    readable?.on('end', () => splitter.end().forEach((line) => spec.onLine(stream, line)));
  }

  // When the main process exits, whatever it left in its group goes too:
  // the run's resources are released, so nothing of it may keep using them.
  subprocess.once('exit', () => {
    exited = true;
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    for (const readable of readables) readable?.resume();
  });

  const outcome = subprocess.then((result): RunOutcome => {
    if (killTimer) clearTimeout(killTimer);
    if (pid !== undefined) liveProcesses.delete(pid);
    if (pid === undefined || (result.failed && result.exitCode === undefined && !result.signal)) {
      return spawnFailure(result.code, file, spec.cwd, result.originalMessage ?? result.shortMessage ?? 'unknown error');
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
    release() {
      gate?.end('go\n');
    },
    terminate(graceMs: number) {
      // Once it has exited, its group id may belong to someone else.
      if (pid === undefined || killTimer || exited) return;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      killTimer.unref();
    },
    kill() {
      if (pid === undefined || exited) return false;
      killed = true;
      signalGroup(pid, 'SIGKILL');
      return true;
    },
    get terminated() {
      return killTimer !== undefined || killed;
    },
  };
}
