/**
 * A run that leaves a daemon behind (`setsid`, so out of its process group
 * and session): the run ends when its main process exits, even while the
 * daemon holds its output pipes open; `fitq cancel` never hangs on it; every
 * worker on Linux finds the daemon by the run's FITQ_RUN_TOKEN and kills it
 * once the main process has exited; and with `--reap-escaped`, where the
 * worker can run commands under the keeper (Linux and Perl: a child
 * subreaper), the daemon is killed with the run even when it clears its
 * environment, whether the main process exits by itself, is canceled, or its
 * worker is SIGKILLed. Real processes, a real worker and a real redis-server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { keeperSupport } from '../../src/worker/subreaper.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';
import { isAlive, killRememberedProcess, rememberProcess, type RememberedGroup } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];
const daemons: RememberedGroup[] = [];

afterEach(() => {
  // A failed test must not leave its daemons behind.
  for (const daemon of daemons.splice(0)) killRememberedProcess(daemon);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-escaped-'));
  dirs.push(dir);
  return dir;
}

/**
 * A shell script that starts a daemon in a session of its own, which writes
 * its pid to `pidFile` and sleeps 300 s (the sleep keeps that pid); `holdOutput`: with the run's
 * stdout and stderr (else with them closed); then runs `rest`.
 */
function daemonScript(pidFile: string, holdOutput: boolean, rest = '', clearEnvironment = false): string[] {
  const redirect = holdOutput ? '' : ' >/dev/null 2>&1';
  // The main process waits for the pid file: it must not end (taking the daemon along) before the daemon is under way.
  const daemon = `setsid ${clearEnvironment ? 'env -i ' : ''}sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' '${pidFile}'${redirect} &`;
  return ['sh', '-c', `${daemon} while [ ! -s '${pidFile}' ]; do sleep 0.02; done; echo spawned${rest}`];
}

async function daemonPid(pidFile: string): Promise<number> {
  const pid = await waitFor('the daemon to write its pid', () => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim()) || undefined;
    } catch {
      return undefined;
    }
  });
  daemons.push(rememberProcess(pid));
  return pid;
}

/** The run once it has ended, within `timeoutMs`. */
async function ended(client: FitqClient, id: string, timeoutMs: number): Promise<RunRecord> {
  return waitFor(`run ${id} to end`, async () => {
    const run = await client.getRun(id);
    return run.status !== 'staged' && run.status !== 'running' ? run : undefined;
  }, timeoutMs);
}

const keeper = keeperSupport();

describe('a run that leaves a daemon behind', () => {
  it('ends when its main process exits though the daemon holds its stdout; the daemon goes with it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(scratch(), 'daemon.pid');
    const { worker } = await startTestWorker(queue, { killGraceMs: 1000, reapEscaped: true });
    const id = (await client.stage({ command: daemonScript(pidFile, true) })).runs[0]!.id;
    const daemon = await daemonPid(pidFile);
    expect((await ended(client, id, 15_000)).status).toBe('completed');
    expect((await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['spawned']);
    expect(worker.activeRuns).toEqual([]);
    if (keeper.ok) await waitFor('the daemon to be killed', () => !isAlive(daemon));
  });

  it('without --reap-escaped, still ends when its main process exits; the daemon, out of its group, is found by its token and killed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(scratch(), 'daemon.pid');
    const { logs } = await startTestWorker(queue, { killGraceMs: 1000 });
    const id = (await client.stage({ command: daemonScript(pidFile, true) })).runs[0]!.id;
    const daemon = await daemonPid(pidFile);
    expect((await ended(client, id, 15_000)).status).toBe('completed');
    await waitFor('the daemon to be killed', () => !isAlive(daemon));
    await waitFor('the worker to say so', () => logs.some((entry) => entry.msg === `Killed 1 process(es) run ${id} left behind (${daemon})`));
  });

  it('without --reap-escaped, a daemon that clears its environment is out of reach: left alone', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = scratch();
    const { logs } = await startTestWorker(queue, { killGraceMs: 1000 });
    const id = (await client.stage({ command: daemonScript(join(dir, 'cleared.pid'), false, '', true) })).runs[0]!.id;
    const daemon = await daemonPid(join(dir, 'cleared.pid'));
    expect((await ended(client, id, 15_000)).status).toBe('completed');
    // A later run's daemon, which keeps its token, is killed by a sweep that comes after the first run's.
    const later = (await client.stage({ command: daemonScript(join(dir, 'kept.pid'), false) })).runs[0]!.id;
    const kept = await daemonPid(join(dir, 'kept.pid'));
    await waitFor('the later daemon to be killed', () => logs.some((entry) => entry.msg === `Killed 1 process(es) run ${later} left behind (${kept})`));
    expect(isAlive(daemon)).toBe(true);
  });

  it('with its stdout closed, does not outlive the run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(scratch(), 'daemon.pid');
    await startTestWorker(queue, { reapEscaped: true });
    const id = (await client.stage({ command: daemonScript(pidFile, false) })).runs[0]!.id;
    const daemon = await daemonPid(pidFile);
    expect((await ended(client, id, 15_000)).status).toBe('completed');
    if (!keeper.ok) return;
    await waitFor('the daemon to be killed', () => !isAlive(daemon));
  });

  it('fitq cancel returns at once on a run whose main process is gone, and on one still running; its daemon goes too', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = scratch();
    await startTestWorker(queue, { killGraceMs: 1000, reapEscaped: true });
    // Main process gone, daemon holding stdout.
    const gone = (await client.stage({ command: daemonScript(join(dir, 'gone.pid'), true) })).runs[0]!.id;
    const goneDaemon = await daemonPid(join(dir, 'gone.pid'));
    const first = await fitq(['cancel', gone], { queue });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(['completed', 'canceled']).toContain((await client.getRun(gone)).status);

    // Main process still running, daemon with stdout closed.
    const running = (await client.stage({ command: daemonScript(join(dir, 'running.pid'), false, '; sleep 60') })).runs[0]!.id;
    const runningDaemon = await daemonPid(join(dir, 'running.pid'));
    const second = await fitq(['cancel', running], { queue });
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await client.getRun(running)).status).toBe('canceled');
    if (!keeper.ok) return;
    await waitFor('the daemons to be killed', () => !isAlive(goneDaemon) && !isAlive(runningDaemon));
  });

  it.runIf(keeper.ok)('is killed with its run when the worker is SIGKILLed (the watchdog ends the run)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(scratch(), 'daemon.pid');
    const worker = spawnCliWorker(queue, ['--name', 'escape-w', '--kill-grace', '1', '--reap-escaped']);
    await worker.waitForMessage('Worker resources: (none)');
    const id = (await client.stage({ command: daemonScript(pidFile, false, '; sleep 60') })).runs[0]!.id;
    const daemon = await daemonPid(pidFile);
    await worker.waitForMessage(`Run ${id} started`);
    worker.process.kill('SIGKILL');
    await worker.exited;
    await waitFor('the daemon to be killed', () => !isAlive(daemon));
  });
});
