/**
 * `fitq worker --detach` (pidfile, log file) and `fitq stop`, which reaches
 * workers through Redis, whatever machine they run on.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { failureOf } from '../../src/cli/detach.js';
import { BIN, connectClient, fitq, messages, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';
import { killRememberedProcess, rememberProcess, type RememberedGroup } from '../support/processes.js';

const stateDirs: string[] = [];
const backgroundPids: RememberedGroup[] = [];

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line holds every one of these words and none of `without`. */
function processesWith(words: readonly string[], without: readonly string[] = []): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (words.every((word) => argv.includes(word)) && !without.some((word) => argv.includes(word))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function newStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-state-'));
  stateDirs.push(dir);
  return dir;
}

afterEach(() => {
  // A failed test must not leave background workers behind.
  for (const background of backgroundPids.splice(0)) killRememberedProcess(background);
  for (const dir of stateDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Each test starts several fitq processes and background workers, many seconds each on a
// loaded machine: the bound catches a hung test, it does not time the commands.
describe('fitq worker --detach and fitq stop', { timeout: 300_000 }, () => {
  it('runs a worker in the background with a pidfile and a log; `fitq stop` lets its run finish, then it is gone', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const env = { XDG_STATE_HOME: newStateDir() };
    const started = await fitq(['worker', '--detach', '-r', 'foo=1', '--name', 'bg1'], { queue, env });
    expect(started.exitCode, started.stderr).toBe(0);
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    const pidfile = join(dir, 'bg1.pid');
    const logFile = join(dir, 'bg1.log');
    expect(started.stdout.trim()).toMatch(new RegExp(`^Worker bg1 started in the background: pid \\d+, log ${logFile}, pidfile ${pidfile}$`));
    const pid = Number(readFileSync(pidfile, 'utf8').split('\n')[0]);
    backgroundPids.push(rememberProcess(pid));
    expect(isRunning(pid)).toBe(true);
    expect((await client.listWorkers()).map((worker) => [worker.name, worker.pid])).toEqual([['bg1', pid]]);

    const { runs } = await client.stage({ command: ['sh', '-c', 'echo begun; sleep 1; echo finished'], resources: 'foo=1' });
    await waitFor('the run to start', async () => (await client.readLog(runs[0]!.id)).length > 0);
    const stopped = await fitq(['stop'], { queue, env });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe('Stopped worker bg1');
    expect(await client.getRun(runs[0]!.id)).toMatchObject({ status: 'completed' });
    expect(await client.listWorkers()).toEqual([]);
    await waitFor('the background process to exit', () => !isRunning(pid));
    expect(existsSync(pidfile)).toBe(false);
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('Stop requested through Redis: letting runs finish');
    expect(log).toContain('Worker bg1 stopped');
  });

  it('a second --detach under a live name is refused and leaves the live worker its pidfile and log', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const env = { XDG_STATE_HOME: newStateDir() };
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    const pidfile = join(dir, 'dw.pid');
    const logFile = join(dir, 'dw.log');
    const first = await fitq(['worker', '--detach', '-r', 'foo=1', '--name', 'dw'], { queue, env });
    expect(first.exitCode, first.stderr).toBe(0);
    const pidfileText = readFileSync(pidfile, 'utf8');
    const pid = Number(pidfileText.split('\n')[0]);
    backgroundPids.push(rememberProcess(pid));
    const logBefore = readFileSync(logFile, 'utf8');

    const second = await fitq(['worker', '--detach', '-r', 'foo=1', '--name', 'dw'], { queue, env });
    expect(second.exitCode).toBe(2);
    expect(existsSync(pidfile) && readFileSync(pidfile, 'utf8')).toBe(pidfileText);
    expect(readFileSync(logFile, 'utf8').startsWith(logBefore)).toBe(true);
    expect(readFileSync(logFile, 'utf8')).not.toContain('already named');
    const failedLog = join(dir, 'dw.failed.log');
    expect(second.stderr.trim()).toBe(`Error: a live worker is already named 'dw': choose another --name (background worker, log ${failedLog})`);
    expect(readFileSync(failedLog, 'utf8')).toContain("a live worker is already named 'dw'");

    // The live worker still logs to its file, and `fitq stop` without a name still finds it.
    const { runs } = await client.stage({ command: ['echo', 'still-logging'], resources: 'foo=1' });
    expect((await client.waitForEnd(runs[0]!.id)).status).toBe('completed');
    const stopped = await fitq(['stop'], { queue, env });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe('Stopped worker dw');
    await waitFor('the background process to exit', () => !isRunning(pid));
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('still-logging');
    expect(log).toContain('Worker dw stopped');
    expect(existsSync(pidfile)).toBe(false);
  });

  it('a background worker takes its pidfile and log itself, even if the command that started it is killed before it registers', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const env = { XDG_STATE_HOME: newStateDir() };
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    const starter = execa('node', [BIN, 'worker', '--detach', '-r', 'foo=1', '--name', 'orphan'], {
      env: { FITQ_REDIS_URL: redisUrl(), FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '', ...env },
      reject: false,
    });
    // Hold the background worker still, so it cannot register before the starter is gone.
    // The background worker once it runs its own command line (without --detach): until its exec, the
    // starter's fork shows the starter's, and holding that still would hold the starter's output pipes open.
    const [pid] = await waitFor('the background worker to exist', () => {
      const found = processesWith(['worker', '--name', 'orphan'], ['--detach']).filter((candidate) => candidate !== starter.pid);
      return found.length > 0 && found;
    });
    backgroundPids.push(rememberProcess(pid!));
    process.kill(pid!, 'SIGSTOP');
    starter.kill('SIGKILL');
    await starter;
    // Held before it registered: the starter could not have adopted its files.
    expect(await client.listWorkers()).toEqual([]);
    expect(existsSync(join(dir, 'orphan.pid'))).toBe(false);
    process.kill(pid!, 'SIGCONT');

    await waitFor('the worker to register', async () => (await client.listWorkers()).some((worker) => worker.pid === pid));
    const pidfile = join(dir, 'orphan.pid');
    await waitFor('its pidfile', () => existsSync(pidfile));
    expect(readFileSync(pidfile, 'utf8').split('\n').slice(0, 3)).toEqual([String(pid), 'orphan', join(dir, 'orphan.log')]);
    expect(readFileSync(join(dir, 'orphan.log'), 'utf8')).toContain('Starting worker orphan');
    expect(readdirSync(dir).filter((file) => file.startsWith('.starting-'))).toEqual([]);
    // `fitq stop` without a name finds it.
    const stopped = await fitq(['stop'], { queue, env });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe('Stopped worker orphan');
    await waitFor('the background process to exit', () => !isRunning(pid!));
  });

  it('--detach with --pidfile and --log-file puts them where asked; with --run-once and nothing to do it reports a finished worker', async () => {
    const queue = newQueue();
    const env = { XDG_STATE_HOME: newStateDir() };
    const files = newStateDir();
    const pidfile = join(files, 'w.pid');
    const logFile = join(files, 'w.log');
    const started = await fitq(['worker', '--detach', '-r', 'foo=1', '--name', 'placed', '--pidfile', pidfile, `--log-file=${logFile}`], { queue, env });
    expect(started.exitCode, started.stderr).toBe(0);
    expect(started.stdout.trim()).toMatch(new RegExp(`^Worker placed started in the background: pid \\d+, log ${logFile}, pidfile ${pidfile}$`));
    const pid = Number(readFileSync(pidfile, 'utf8').split('\n')[0]);
    backgroundPids.push(rememberProcess(pid));
    expect(readFileSync(logFile, 'utf8')).toContain('Starting worker placed');
    const stopped = await fitq(['stop', 'placed'], { queue, env });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    await waitFor('the background process to exit', () => !isRunning(pid));
    expect(existsSync(pidfile)).toBe(false);

    const once = await fitq(['worker', '--detach', '-r', 'foo=1', '--name', 'brief', '--run-once'], { queue, env });
    expect(once.exitCode, once.stderr).toBe(0);
    expect(once.stderr).toBe('');
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    expect(once.stdout.trim()).toMatch(/^Worker brief (started in the background: pid \d+,|ran in the background and has finished:) log /);
    const client = await connectClient(queue);
    await waitFor('the brief worker to leave', async () => (await client.listWorkers()).length === 0);
    expect(readdirSync(dir).filter((file) => file.includes('failed'))).toEqual([]);
  });

  it('`fitq stop NAME --now` reaches a worker through Redis alone and terminates its runs first: they end lost, or are re-staged, never failed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // An in-process worker: it hears of the stop only through Redis, as one on another machine would.
    const { worker, logs } = await startTestWorker(queue, { name: 'remote', resources: 'foo=2', killGraceMs: 1000 });
    const plain = (await client.stage({ command: ['sleep', '60'], resources: 'foo=1' })).runs[0]!.id;
    const retried = (await client.stage({ command: ['sleep', '60'], resources: 'foo=1', retries: 3 })).runs[0]!.id;
    for (const id of [plain, retried]) {
      await waitFor('the run to start', async () => messages(logs).includes(`Run ${id} started`));
    }
    const stopped = await fitq(['stop', 'remote', '--now'], { queue });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe('Stopped worker remote');
    await worker.done;
    const why = 'its worker remote was stopped (fitq stop --now)';
    const run = await client.getRun(plain);
    expect(run).toMatchObject({ status: 'lost', reason: why, worker: 'remote' });
    expect(run.signal).toBeUndefined();
    expect(await client.getRun(retried)).toMatchObject({ status: 'staged', restaged: 1, restagedReason: `${why} (re-staged 1 of 3)` });
    expect(messages(logs)).toContain('Stop requested through Redis: terminating runs');
    expect(messages(logs)).toContain(`Run ${plain} terminated (signal SIGTERM) as ${why}: lost`);
    expect(await client.listWorkers()).toEqual([]);
  });

  it('a worker that missed the stop message hears of it at its next heartbeat', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker, logs } = await startTestWorker(queue, { name: 'deaf', resources: 'foo=1', leaseMs: 600 });
    // As the requestStop script leaves it, without the pub/sub message.
    await client.redis.hset(client.keys.worker('deaf').info, 'stopRequested', 'graceful');
    await worker.done;
    expect(messages(logs)).toContain('Stop requested through Redis: letting runs finish');
  });

  it('`fitq stop` says it skips a pidfile whose worker is gone (killed), and removes it', async () => {
    const queue = newQueue();
    const env = { XDG_STATE_HOME: newStateDir() };
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    mkdirSync(dir, { recursive: true });
    // A worker killed with SIGKILL leaves its pidfile: a pid no process has any more.
    const gone = (await execa('sh', ['-c', 'echo $$'])).stdout.trim();
    const pidfile = join(dir, 'ghost.pid');
    writeFileSync(pidfile, `${gone}\nghost\n${join(dir, 'ghost.log')}\n`);
    const result = await fitq(['stop'], { queue, env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      `Removed stale pidfile ${pidfile}: worker ghost (pid ${gone}) is not running`,
      `Error: no worker named, and no background worker of queue '${queue}' runs on this machine`,
    ]);
    expect(existsSync(pidfile)).toBe(false);
  });

  it.each([
    [['stop', 'nosuch'], "Error: unknown worker 'nosuch' (no live worker has that name)"],
    [['stop', 'bad name!'], "Error: invalid worker name 'bad name!'"],
    [['stop'], "Error: no worker named, and no background worker of queue 'QUEUE' runs on this machine"],
    [['stop', 'a', '--all'], 'Error: give worker names or --all, not both'],
    [['worker', '--pidfile', '/tmp/x.pid'], 'Error: --pidfile goes with --detach'],
    [['worker', '--detach', '-r', 'foo=-1'], /^Error: invalid resource spec 'foo=-1': value must not be negative \(background worker, log \/.+\.log\)$/],
  ])('refuses fitq %j with one line and exit 2, leaving nothing behind', async (args, message) => {
    const queue = newQueue();
    const env = { XDG_STATE_HOME: newStateDir() };
    const result = await fitq(args, { queue, env });
    expect(result.exitCode).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    if (typeof message === 'string') expect(lines[0]!.startsWith(message.replace('QUEUE', queue)), lines[0]).toBe(true);
    else expect(lines[0]).toMatch(message);
    const dir = join(env.XDG_STATE_HOME, 'fitq', queue);
    // No pidfile of a worker that never ran.
    const left = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.pid')) : [];
    expect(left).toEqual([]);
    expect(await (await connectClient(queue)).listWorkers()).toEqual([]);
  });
  it("says why a background worker failed from its log's error line, even when its logger flushed a line after it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'fitq-failed-'));
    const log = join(dir, 'w.failed.log');
    // As a loaded machine wrote it once: pino's buffered INFO line flushed at exit, after the error.
    writeFileSync(log, "Error: a live worker is already named 'dw': choose another --name\n[15:20:56.639] INFO: Starting worker dw\n");
    expect(failureOf(log)).toBe("Error: a live worker is already named 'dw': choose another --name");
    writeFileSync(log, 'something else went wrong\n');
    expect(failureOf(log)).toBe('something else went wrong');
    rmSync(dir, { recursive: true });
  });
});
