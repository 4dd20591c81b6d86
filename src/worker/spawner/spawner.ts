/**
 * The worker's side of the spawn helper (helper.js): small Node processes
 * (HELPERS per worker process), started with the worker, that fork every run's
 * process so the worker never forks itself (a fork costs in proportion to
 * the memory of the process that forks, and the worker is several times the
 * helper's size). The helper lets each run go once its own watchdog
 * (watchdog.js) has the run's group. It knows nothing of runs; child.ts
 * says what to spawn and what to signal, and hears back its pid, its group,
 * its output and its end.
 *
 * If a helper dies, its runs' pipes and gates die with it and its watchdog
 * ends them: every run it had is told (`lost`), and a new helper is started
 * when one is next needed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SPAWN_DESCRIPTORS } from '../shortage.js';

/** What the spawner tells about one run's process. */
export interface SpawnListener {
  spawned(pid: number): void;
  /** It could not be spawned: Node's error code and message. */
  failed(code: string | undefined, message: string): void;
  /** The keeper told its run's group. */
  group(group: number): void;
  /** The keeper told the main process's wait status. */
  status(status: number): void;
  output(stream: 0 | 1, chunk: Buffer): void;
  exit(): void;
  /** Its pipes are closed too: the last word. */
  close(code: number | null, signal: NodeJS.Signals | null): void;
  /** The helper died before its close (`why`: its pid, how it ended): nothing more comes. */
  lost(why: string): void;
}

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Its group is told by the keeper (else it is its pid). */
  toldGroup: boolean;
  /** If the helper goes, the watchdog sends its group SIGTERM, then SIGKILL this many seconds later. */
  graceSeconds: number;
}

type Reply =
  | { op: 'ready' }
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'failed'; id: number; code?: string; message: string }
  | { op: 'group'; id: number; group: number }
  | { op: 'status'; id: number; status: number }
  | { op: 'out'; id: number; stream: 0 | 1; chunk: Uint8Array }
  | { op: 'exit'; id: number }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

type Command =
  | ({ op: 'spawn'; id: number } & SpawnRequest)
  | { op: 'closeGate'; id: number }
  | { op: 'signal'; id: number; signal: NodeJS.Signals }
  | { op: 'pause' | 'resume'; id: number; stream: 0 | 1 };

/** How long a run's output pipes are read after its main process has exited, at most (the helper closes them then). */
export const PIPE_DRAIN_MS = 1000;

const HELPER = fileURLToPath(new URL('./helper.js', import.meta.url));

/** One helper process, and the runs it has. */
class Helper {
  readonly process: ChildProcess;
  readonly runs = new Map<number, SpawnListener>();
  private ready = false;
  /** Commands not sent yet: those of this turn of the event loop, or all until the helper is ready. */
  private queued: Command[] = [];

  constructor(private readonly onGone: (helper: Helper) => void) {
    // Its own session (a Ctrl-C is the worker's to handle) and an empty
    // environment: nothing of the worker's (NODE_OPTIONS, its Redis URL)
    // reaches it; each run's environment comes with its request.
    this.process = spawn(process.execPath, [HELPER, String(PIPE_DRAIN_MS), String(SPAWN_DESCRIPTORS)], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      detached: true,
      env: {},
    });
    this.process.on('message', (replies: Reply[]) => this.receiveAll(replies));
    this.process.once('error', (error) => this.gone(`it could not start: ${error.message}`));
    this.process.once('exit', (code, signal) => this.gone(signal ? `killed by signal ${signal}` : `exit code ${code}`));
    // It must not keep the worker's process alive: the runs' own handles and the worker's do.
    this.process.unref();
    this.process.channel?.unref();
  }

  /** Commands of one turn of the event loop go in one message (each message written wakes the helper). */
  send(command: Command): void {
    if (this.queued.length === 0 && this.ready) setImmediate(() => this.flush());
    this.queued.push(command);
  }

  private flush(): void {
    const commands = this.queued;
    this.queued = [];
    if (commands.length > 0 && this.process.connected) this.process.send(commands);
  }

  private receiveAll(replies: Reply[]): void {
    for (const reply of replies) this.receive(reply);
  }

  private receive(reply: Reply): void {
    if (reply.op === 'ready') {
      this.ready = true;
      this.flush();
      return;
    }
    const listener = this.runs.get(reply.id);
    if (!listener) return;
    switch (reply.op) {
      case 'spawned':
        return listener.spawned(reply.pid);
      case 'failed':
        this.runs.delete(reply.id);
        return listener.failed(reply.code, reply.message);
      case 'group':
        return listener.group(reply.group);
      case 'status':
        return listener.status(reply.status);
      case 'out':
        return listener.output(reply.stream, Buffer.from(reply.chunk.buffer, reply.chunk.byteOffset, reply.chunk.byteLength));
      case 'exit':
        return listener.exit();
      case 'close':
        this.runs.delete(reply.id);
        return listener.close(reply.code, reply.signal);
    }
  }

  private gone(why: string): void {
    this.onGone(this);
    this.ready = false;
    this.queued = [];
    const runs = [...this.runs.values()];
    this.runs.clear();
    for (const listener of runs) listener.lost(`pid ${this.process.pid ?? '?'}, ${why}`);
  }
}

/** A run's process as the spawner handles it. */
export interface SpawnedProcess {
  closeGate(): void;
  signal(signal: NodeJS.Signals): void;
  pause(stream: 0 | 1): void;
  resume(stream: 0 | 1): void;
}

/**
 * Helpers per worker process. A spawn blocks its helper until the child has
 * exec'd (Node waits for it), so two helpers spawn side by side on a machine
 * with more than one core; each run stays with the one that spawned it.
 */
const HELPERS = 2;
const helpers: (Helper | undefined)[] = Array.from({ length: HELPERS }, () => undefined);
let nextId = 1;

/** The pids of this process's spawn helpers that run (tests kill them). */
export function spawnHelperPids(): number[] {
  return helpers.flatMap((helper) => (helper?.process.pid === undefined ? [] : [helper.process.pid]));
}

/** Starts this process's spawn helpers if they do not run (a worker does as it starts, so its first runs need not wait for them). */
export function spawnHelper(): void {
  for (let slot = 0; slot < HELPERS; slot++) runningHelper(slot);
}

function runningHelper(slot: number): Helper {
  const helper = (helpers[slot] ??= new Helper((gone) => {
    if (helpers[slot] === gone) helpers[slot] = undefined;
  }));
  return helper;
}

/** The helper with the fewest runs, started now if it does not run. */
function leastBusyHelper(): Helper {
  let best = 0;
  for (let slot = 1; slot < HELPERS; slot++) if ((helpers[slot]?.runs.size ?? 0) < (helpers[best]?.runs.size ?? 0)) best = slot;
  return runningHelper(best);
}

/** Asks a helper (started now if none runs) to spawn a run's process; `listener` hears what becomes of it. */
export function spawnThroughHelper(request: SpawnRequest, listener: SpawnListener): SpawnedProcess {
  const helper = leastBusyHelper();
  const id = nextId++;
  helper.runs.set(id, listener);
  helper.send({ op: 'spawn', id, ...request, args: [...request.args] });
  return {
    closeGate: () => helper.send({ op: 'closeGate', id }),
    signal: (signal) => helper.send({ op: 'signal', id, signal }),
    pause: (stream) => helper.send({ op: 'pause', id, stream }),
    resume: (stream) => helper.send({ op: 'resume', id, stream }),
  };
}
