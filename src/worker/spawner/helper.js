// The spawn helper: a small Node process a worker starts once (see
// spawner.ts), which spawns each run's process on the worker's request and
// tells it back what happens to it, over an IPC channel. Forking a process
// costs in proportion to the memory of the one that forks (page tables):
// the worker, with Redis clients, BullMQ and its logger loaded, is several
// times this one's size, so spawning from here keeps each run's fork small
// and takes it off the worker's main thread.
//
// It lets each run go itself: the run's process group goes to its watchdog
// (watchdog.js) before the command can outlive the helper, and only then
// does the command run. A plain run is spawned as the command itself (its
// group is its pid, known as the spawn returns, and the watchdog is told
// before anything else happens); a run under the keeper (see subreaper.ts)
// waits at the keeper's gate until the keeper has told its group and the
// watchdog has it.
//
// Plain JavaScript importing nothing but Node (and watchdog.js), so it stays
// small and runs as it is from src/ (tests) and from dist/ (the build copies
// it). It knows nothing of runs: the worker says what to spawn, what to
// signal, when to pause reading.
//
// Each message on the channel is an array of these, in order.
// Worker -> helper: {op: 'spawn', id, file, args, cwd, env, toldGroup,
// graceSeconds}, {op: 'closeGate', id}, {op: 'signal', id, signal}, {op:
// 'pause' | 'resume', id, stream}.
// Helper -> worker: {op: 'ready'}, {op: 'spawned', id, pid}, {op: 'failed',
// id, code, message}, {op: 'group', id, group}, {op: 'status', id, status},
// {op: 'out', id, stream, chunk}, {op: 'exit', id}, {op: 'close', id, code,
// signal}.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Watchdog } from './watchdog.js';

/** How long a run's pipes are read after its main process exited, at most (child.ts PIPE_DRAIN_MS). */
const PIPE_DRAIN_MS = Number(process.argv[2] ?? 1000);
/** Descriptors to have free before spawning (shortage.ts SPAWN_DESCRIPTORS): Node leaks the pipes of a spawn that fails for want of them. */
const SPAWN_DESCRIPTORS = Number(process.argv[3] ?? 16);
/** Output on its way to the worker above which reading every run pauses, and below which it goes on. */
const CHANNEL_HIGH = 4 * 1024 * 1024;
const CHANNEL_LOW = 1024 * 1024;

/** Runs under way, by the worker's id: {child, group, exited, gate, readables, paused}. */
const runs = new Map();
/** Ends the runs' groups if this process goes (its worker died, or it was killed). */
const watchdog = new Watchdog();
let unsent = 0;
let channelFull = false;

/**
 * Messages of one turn of the event loop go to the worker in one (runs
 * start and end in bursts, and each message written wakes the worker).
 */
let outbox = [];
let outboxBytes = 0;

function send(message, bytes = 0) {
  if (!process.connected) return;
  if (outbox.length === 0) setImmediate(flush);
  outbox.push(message);
  outboxBytes += bytes;
}

function flush() {
  const messages = outbox;
  const bytes = outboxBytes;
  outbox = [];
  outboxBytes = 0;
  if (!process.connected) return;
  unsent += bytes;
  process.send(messages, undefined, undefined, () => {
    unsent -= bytes;
    if (channelFull && unsent <= CHANNEL_LOW) {
      channelFull = false;
      for (const run of runs.values()) for (const stream of [0, 1]) resumeIfFree(run, stream);
    }
  });
  if (!channelFull && unsent > CHANNEL_HIGH) {
    channelFull = true;
    for (const run of runs.values()) for (const readable of run.readables) if (!run.exited) readable?.pause();
  }
}

function resumeIfFree(run, stream) {
  if (run.exited || (!channelFull && !run.paused[stream])) run.readables[stream]?.resume();
}

function signalGroup(group, signal) {
  try {
    process.kill(-group, signal);
  } catch {
    // The group is already gone.
  }
}

/** Why this process has too few descriptors free to spawn (shortage.ts descriptorShortage), or undefined. */
function descriptorShortage() {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft === undefined) return undefined;
    const open = readdirSync('/proc/self/fd').length - 1;
    return Number(soft) - open >= SPAWN_DESCRIPTORS ? undefined : { code: 'EMFILE', message: `${open} open, its limit ${soft}` };
  } catch (error) {
    return error.code === 'EMFILE' || error.code === 'ENFILE' ? { code: error.code, message: error.message } : undefined;
  }
}

/** Lists a run's group with the watchdog, then lets the run go: false (the run told it failed) if no watchdog can run. */
function watchAndGo(id, run, group, graceSeconds) {
  try {
    watchdog.watch(group, graceSeconds);
  } catch (error) {
    signalGroup(group, 'SIGKILL');
    send({ op: 'failed', id, code: error.code, message: error.message });
    return false;
  }
  run.group = group;
  return true;
}

function start({ id, file, args, cwd, env, toldGroup, graceSeconds }) {
  const shortage = descriptorShortage();
  if (shortage) return send({ op: 'failed', id, ...shortage });
  let child;
  try {
    // The keeper's gate is fd 3, which it also tells on; a plain run is the command itself, its stdin /dev/null.
    const stdio = toldGroup ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'];
    child = spawn(file, args, { cwd, env, detached: true, stdio });
  } catch (error) {
    return send({ op: 'failed', id, code: error.code, message: error.message });
  }
  if (child.pid === undefined) {
    child.once('error', (error) => send({ op: 'failed', id, code: error.code, message: error.message }));
    return;
  }
  // A plain run's group is its pid, watched at once; the keeper tells the group it made, then is let go.
  const run = { child, group: undefined, exited: false, gate: toldGroup ? child.stdio[3] : undefined, readables: [child.stdout, child.stderr], paused: [false, false] };
  if (!toldGroup && !watchAndGo(id, run, child.pid, graceSeconds)) {
    for (const readable of run.readables) readable?.destroy();
    return;
  }
  runs.set(id, run);
  send({ op: 'spawned', id, pid: child.pid });
  run.gate?.on('error', () => {});
  let told = '';
  run.gate?.on('data', (chunk) => {
    told += chunk.toString('latin1');
    let end;
    while ((end = told.indexOf('\n')) >= 0) {
      const [word, value] = told.slice(0, end).split(' ');
      told = told.slice(end + 1);
      if (word === 'group' && run.group === undefined) {
        if (!watchAndGo(id, run, Number(value), graceSeconds)) return run.gate.destroy();
        // The keeper's gate stays open: it tells the main process's end on it.
        run.gate.write('go\n');
        send({ op: 'group', id, group: run.group });
      } else if (word === 'status') send({ op: 'status', id, status: Number(value) });
    }
  });
  for (const [stream, readable] of run.readables.entries()) {
    readable?.on('data', (chunk) => send({ op: 'out', id, stream, chunk }, chunk.length));
  }
  child.on('error', () => {}); // after a spawn that worked: 'close' follows
  child.once('exit', () => {
    run.exited = true;
    // Whatever it left in its group goes with it (the keeper did that, and more, itself); then the watchdog has nothing of it to end.
    if (run.group !== undefined) {
      signalGroup(run.group, 'SIGKILL');
      watchdog.forget(run.group);
    }
    for (const readable of run.readables) readable?.resume();
    send({ op: 'exit', id });
    // Something that escaped the group may hold the pipes open: read what is there, but do not wait for it.
    run.drainTimer = setTimeout(() => {
      for (const readable of run.readables) readable?.destroy();
      run.gate?.destroy();
    }, PIPE_DRAIN_MS);
  });
  child.once('close', (code, signal) => {
    clearTimeout(run.drainTimer);
    runs.delete(id);
    send({ op: 'close', id, code, signal });
  });
}

const handlers = {
  spawn: start,
  closeGate({ id }) {
    runs.get(id)?.gate?.destroy();
  },
  signal({ id, signal }) {
    const run = runs.get(id);
    // Once it has exited, its group id may belong to someone else.
    if (run && !run.exited && run.group !== undefined) signalGroup(run.group, signal);
  },
  pause({ id, stream }) {
    const run = runs.get(id);
    if (!run || run.exited) return;
    run.paused[stream] = true;
    run.readables[stream]?.pause();
  },
  resume({ id, stream }) {
    const run = runs.get(id);
    if (!run) return;
    run.paused[stream] = false;
    resumeIfFree(run, stream);
  },
};

// A Ctrl-C meant for the worker is the worker's to handle (the helper has a session of its own anyway).
process.on('SIGINT', () => {});
process.on('message', (messages) => {
  for (const message of messages) handlers[message.op]?.(message);
});
// The worker is gone: the watchdog ends the runs (a run at the keeper's gate never starts: the gate closes with this process).
process.on('disconnect', () => process.exit(0));
send({ op: 'ready' });
