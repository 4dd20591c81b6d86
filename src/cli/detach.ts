/**
 * `fitq worker --detach`: the worker runs on in the background, its output
 * in a log file and its pid in a pidfile, both under the state directory
 * (FITQ_STATE_DIR, else $XDG_STATE_HOME/fitq, else ~/.local/state/fitq), one
 * folder per queue. `fitq stop` without a name finds them there.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';

/** Set in a detached worker's environment: the pidfile it removes when it exits. */
export const PIDFILE_ENV = 'FITQ_PIDFILE';
/** Set in a detached worker's environment: where it logs until it has registered, and the log it then takes. */
const STARTING_LOG_ENV = 'FITQ_STARTING_LOG';
const LOG_FILE_ENV = 'FITQ_LOG_FILE';

export function stateDir(queue: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.FITQ_STATE_DIR || join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'fitq');
  return join(base, queue);
}

export interface DetachedWorker {
  name: string;
  pid: number;
  pidfile: string;
  logFile: string;
}

export interface StartedWorker extends DetachedWorker {
  /** Where the worker logs until it has registered (the log file itself when given). */
  startingLog: string;
  /** Resolves with the exit code if the background worker exits while this process runs. */
  exited: Promise<number>;
}

/**
 * Starts `fitq worker ARGS` (without --detach) in the background and returns
 * at once; the caller waits for it to register. The default worker name,
 * hostname-pid, is the child's, so it is known as soon as the child exists.
 * Its pidfile and log keep their names only once it has registered (see
 * adoptDetachedFiles): until then another live worker may hold that name.
 */
export function spawnDetachedWorker(options: {
  bin: string;
  args: readonly string[];
  queue: string;
  name?: string;
  pidfile?: string;
  logFile?: string;
}): StartedWorker {
  const dir = stateDir(options.queue);
  mkdirSync(dir, { recursive: true });
  const startingLog = options.logFile ?? join(dir, `.starting-${process.pid}-${Date.now()}.log`);
  let fd: number;
  try {
    fd = openSync(startingLog, 'a');
  } catch (error) {
    throw new UsageError(`cannot open log file '${startingLog}': ${(error as Error).message}`);
  }
  const child = spawn(process.execPath, [options.bin, 'worker', ...options.args], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, [PIDFILE_ENV]: options.pidfile ?? '', [STARTING_LOG_ENV]: startingLog, [LOG_FILE_ENV]: options.logFile ?? '' },
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new UsageError('could not start a background worker');
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  child.unref();
  const name = options.name ?? `${hostname()}-${pid}`;
  const logFile = options.logFile ?? join(dir, `${name}.log`);
  const pidfile = options.pidfile ?? join(dir, `${name}.pid`);
  return { name, pid, pidfile, logFile, startingLog, exited };
}

/**
 * Once the worker has registered, the name is its own: its log and pidfile
 * take the name. Both the background worker and the command that started it
 * do this (whichever comes first), so the files are right even if that
 * command is killed while it waits.
 */
export function adoptDetachedFiles(worker: Pick<StartedWorker, 'name' | 'pid' | 'pidfile' | 'logFile' | 'startingLog'>): void {
  if (worker.startingLog !== worker.logFile) {
    try {
      renameSync(worker.startingLog, worker.logFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // the other side moved it already
    }
  }
  writeFileSync(worker.pidfile, `${worker.pid}\n${worker.name}\n${worker.logFile}\n`);
  // It may have exited already (a --run-once worker with nothing to do): no pidfile of a dead worker.
  if (!isRunning(worker.pid)) removePidfileOf(worker.pidfile, worker.pid);
}

/** In a background worker that has registered: adopts its files (see adoptDetachedFiles). */
export function adoptOwnDetachedFiles(name: string, queue: string, env: NodeJS.ProcessEnv = process.env): void {
  const startingLog = env[STARTING_LOG_ENV];
  if (!startingLog) return;
  const logFile = env[LOG_FILE_ENV];
  // Not for the runs' environment.
  delete env[STARTING_LOG_ENV];
  delete env[LOG_FILE_ENV];
  const dir = stateDir(queue, env);
  adoptDetachedFiles({
    name,
    pid: process.pid,
    pidfile: env[PIDFILE_ENV] || join(dir, `${name}.pid`),
    logFile: logFile || join(dir, `${name}.log`),
    startingLog,
  });
}

/**
 * A worker that failed to start leaves its log as `<name>.failed.log`, next
 * to (never over) the files of a live worker of that name; returns its path.
 */
export function keepFailedLog(worker: StartedWorker): string {
  if (worker.startingLog === worker.logFile) return worker.logFile;
  const failedLog = worker.logFile.replace(/(\.log)?$/, '.failed.log');
  try {
    renameSync(worker.startingLog, failedLog);
  } catch (error) {
    // It registered and took its own log before failing.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return worker.logFile;
    throw error;
  }
  return failedLog;
}

/** Removes a pidfile if it still names this pid. */
export function removePidfileOf(pidfile: string, pid: number): void {
  try {
    if (readFileSync(pidfile, 'utf8').split('\n')[0] === String(pid)) rmSync(pidfile);
  } catch {
    // already gone
  }
}

/** Removes this process's pidfile when it exits, if the file still names it. */
export function removePidfileOnExit(name: string, queue: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env[PIDFILE_ENV] === undefined) return;
  const pidfile = env[PIDFILE_ENV] || join(stateDir(queue, env), `${name}.pid`);
  process.once('exit', () => removePidfileOf(pidfile, process.pid));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Detached workers of this queue on this machine, by their pidfiles: those
 * whose process still runs (`live`), and those whose process is gone
 * (`stale`: it was killed, or the machine restarted, before it could remove
 * its pidfile).
 */
export function localDetachedWorkers(queue: string): { live: DetachedWorker[]; stale: DetachedWorker[] } {
  const dir = stateDir(queue);
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return { live: [], stale: [] };
  }
  const live: DetachedWorker[] = [];
  const stale: DetachedWorker[] = [];
  for (const entry of entries.filter((file) => file.endsWith('.pid'))) {
    const pidfile = join(dir, entry);
    let text: string;
    try {
      text = readFileSync(pidfile, 'utf8');
    } catch {
      continue; // its worker exited meanwhile
    }
    const [pidText = '', name = '', logFile = ''] = text.split('\n');
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0 || !name) continue;
    (isRunning(pid) ? live : stale).push({ name, pid, pidfile, logFile });
  }
  return { live, stale };
}

/**
 * Why a background worker that failed to start exited, from its log: its
 * last `Error: ` line (its logger may flush lines buffered before the error
 * after it, as the process exits), else its last line.
 */
export function failureOf(file: string): string {
  const lines = tail(file, 20).split('\n');
  return [...lines].reverse().find((line) => line.startsWith('Error: ')) ?? lines.at(-1) ?? '';
}

/** The last lines of a file, for explaining why a background worker exited. */
export function tail(file: string, lines = 5): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
