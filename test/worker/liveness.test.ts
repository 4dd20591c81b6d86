/**
 * Worker liveness with real processes: a CLI worker killed with SIGKILL
 * leaves no run process behind (its spawn helpers' watchdogs end them, even
 * when the helpers are killed with it), its runs end as
 * `lost` within the lease and are never re-run, its reservation goes, and its
 * name can be taken again. Also: a name held by a live worker is refused, and
 * SIGTERM stops a worker gracefully (a second SIGTERM terminates its runs,
 * which are re-staged or end lost, never failed).
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { heartbeatIntervalMs } from '../../src/model/liveness.js';
import { workerToJson } from '../../src/model/worker-record.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { isAlive, killRememberedGroup, rememberGroup, type RememberedGroup } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { startRedisServer } from '../support/redis-server.js';
import { connectClient, fitq, messages, newQueue, parseJsonLog, spawnFitq, stagedShape, startTestWorker } from '../support/fitq.js';

// ---------------------------------------------------------------- helpers

/**
 * Live (non-zombie) members of a process group. Orphans are reparented to
 * PID 1, which may reap them late: a zombie has ended, so it does not count.
 */
function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    // No /proc (not Linux): ask the kernel about the group as a whole.
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') members.push(Number(entry));
  }
  return members;
}

/** `pid ppid pgrp state args` of each process, for a failure's message. */
function describeProcesses(pids: readonly number[]): string {
  return pids
    .map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 80);
        return `${pid} ${ppid} ${pgrp} ${state} ${args}`;
      } catch {
        return `${pid} gone`;
      }
    })
    .join('; ') || 'nothing';
}

/** Every run watchdog on the machine (`sh -c … fitq-watchdog`). */
function watchdogs(): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('fitq-watchdog');
    } catch {
      return false;
    }
  });
}

/** What a process's stdin is (`pipe:[inode]`), or undefined. */
function stdinOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/0`);
  } catch {
    return undefined;
  }
}

/** Processes with a descriptor open on `target` (a `pipe:[inode]`). */
function holdersOf(target: string | undefined): number[] {
  if (target === undefined) return [];
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === target);
    } catch {
      return false;
    }
  });
}

/** The parent of a process, from the kernel. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** Live children of a process whose command line holds `marker`. */
function childrenOf(parent: number, marker: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const pid = Number(entry);
      return parentOf(pid) === parent && isAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) ? [pid] : [];
    } catch {
      return [];
    }
  });
}

const runGroups = new Set<RememberedGroup>();
const tempDirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-liveness-'));
  tempDirs.push(dir);
  return dir;
}

/** A shell script that records its pid (= its process group) in `pidFile`, then does `rest`. */
function pidScript(pidFile: string, rest: string): string[] {
  return ['sh', '-c', `echo $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'; ${rest}`];
}

/** The pid a run's pidScript wrote, once it has. */
function writtenPid(pidFile: string): number | undefined {
  try {
    const value = Number(readFileSync(pidFile, 'utf8').trim());
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Waits until the run is running and its process has written its pid. */
async function waitUntilRunning(client: FitqClient, runId: string, pidFile: string): Promise<number> {
  const pid = await waitFor(`run ${runId} to write its pid file`, () => writtenPid(pidFile));
  runGroups.add(rememberGroup(pid));
  expect((await client.getRun(runId)).status).toBe('running');
  return pid;
}

async function waitForStatus(client: FitqClient, runId: string, statuses: string[], timeoutMs = 30_000): Promise<RunRecord> {
  return waitFor(
    `run ${runId} to become ${statuses.join(' or ')}`,
    async () => {
      const run = await client.getRun(runId);
      return statuses.includes(run.status) ? run : undefined;
    },
    timeoutMs,
  );
}

afterEach(async () => {
  // Whatever a failed test left behind (worker processes go in cli-worker.ts): run process groups, files.
  for (const group of runGroups) killRememberedGroup(group);
  runGroups.clear();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- tests

describe('a worker killed with SIGKILL', () => {
  it('leaves no run process running: its watchdog terminates the run process group', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    // A run with a child of its own, in the background: the whole group must go.
    const { runs } = await client.stage({ command: pidScript(pidFile, 'sleep 60 & wait'), resources: 'foo=1' });
    const runId = runs[0]!.id;

    const victim = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const pgid = await waitUntilRunning(client, runId, pidFile);
    await waitFor('the run to have its background child', () => groupMembers(pgid).length >= 2);

    victim.process.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    // SIGTERM goes to the group at once; SIGKILL follows after --kill-grace (1 s).
    await waitFor(`run process group ${pgid} to be gone after the worker died`, () => groupMembers(pgid).length === 0, 5000).catch(
      (error: Error) => {
        const left = groupMembers(pgid).map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
        throw new Error(`${error.message}; still alive: ${left.join('; ')}; worker log:\n${victim.stdout()}\n${victim.stderr()}`);
      },
    );
    expect(isAlive(pgid)).toBe(false);
  });

  it('leaves no run behind even when killed the moment the run starts (its helper lets it go once the watchdog has its group)', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const queue = newQueue();
      const client = await connectClient(queue);
      const pidFile = join(tempDir(), 'pid');
      const { runs } = await client.stage({ command: pidScript(pidFile, 'sleep 30'), resources: 'foo=1' });
      const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', `quick${attempt}`, '--lease', '2', '--kill-grace', '1']);
      // Kill as soon as the run's own process has written its pid: no later.
      const pid = await waitFor(`run ${runs[0]!.id} to write its pid`, () => writtenPid(pidFile), 30_000, 1);
      runGroups.add(rememberGroup(pid));
      victim.process.kill('SIGKILL');
      await victim.exited;
      await waitFor(`run process group ${pid} to be gone (attempt ${attempt})`, () => groupMembers(pid).length === 0);
    }
  });

  /** A CLI worker running one run of `script` (after its pid is written), with the run's group and the helper that spawned it. */
  async function workerWithRun(name: string, script: string) {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(tempDir(), 'pid');
    const { runs } = await client.stage({ command: pidScript(pidFile, script), resources: 'foo=1' });
    const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', name, '--lease', '2', '--kill-grace', '1']);
    const pgid = await waitUntilRunning(client, runs[0]!.id, pidFile);
    const helper = parentOf(pgid);
    expect(childrenOf(victim.process.pid!, 'helper.js')).toContain(helper);
    // A plain run's command runs as its spawn returns; the helper spawns its watchdog next, so the run can write
    // its pid first (seen in CI, under load): wait for the watchdog, which has the run's group once it runs.
    await waitFor(`helper ${helper}'s watchdog`, () => childrenOf(helper, 'fitq-watchdog')[0]);
    /** The worker and its helpers killed at once (nothing of theirs runs on to clean up); resolves once the run's group is gone. */
    const killAllAndWait = async () => {
      // The helper's watchdogs and the pipe each reads the helper's word from: their end of it is what ends the run.
      const watching = childrenOf(helper, 'fitq-watchdog').map((pid) => ({ pid, stdin: stdinOf(pid) }));
      for (const pid of [victim.process.pid!, ...childrenOf(victim.process.pid!, 'helper.js')]) process.kill(pid, 'SIGKILL');
      await victim.exited;
      // The default bound (30 s), not 5 s: once seen taking over 5 s in a CI run of three files at once. Should it
      // fail, it says what was left of the group and of the watchdogs, and who still holds the helper's watchdog pipe.
      await waitFor(`run process group ${pgid} to be gone`, () => groupMembers(pgid).length === 0).catch((error: Error) => {
        const pipes = watching.map(({ pid, stdin }) => `watchdog ${pid} (${describeProcesses([pid])}) read ${stdin}, held now by ${describeProcesses(holdersOf(stdin))}`);
        throw new Error(`${error.message}; left: ${describeProcesses([...groupMembers(pgid), ...watchdogs()])}; the helper's watchdogs: ${pipes.join('; ') || 'none'}`);
      });
    };
    return { pgid, helper, killAllAndWait };
  }

  it('leaves no run running when its spawn helpers are killed with it (their watchdogs end the runs)', async () => {
    const { killAllAndWait } = await workerWithRun('with-helpers', 'sleep 60 & wait');
    await killAllAndWait();
  });

  it("leaves no run running when its helper's watchdog died before: a new watchdog was told the run", async () => {
    const { pgid, helper, killAllAndWait } = await workerWithRun('watchdog-died', 'sleep 60');
    const [watchdog] = childrenOf(helper, 'fitq-watchdog');
    expect(watchdog).toBeDefined();
    process.kill(watchdog!, 'SIGKILL');
    await waitFor('a new watchdog', () => childrenOf(helper, 'fitq-watchdog').find((pid) => pid !== watchdog));
    expect(isAlive(pgid)).toBe(true);
    await killAllAndWait();
  });

  it('has its runs marked lost within the lease, its reservation released, and nothing re-run; its name is free again', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const { runs } = await client.stage({ command: pidScript(pidFile, 'sleep 60'), resources: 'foo=1' });
    const runId = runs[0]!.id;

    const victim = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const pid = await waitUntilRunning(client, runId, pidFile);
    const running = await client.getRun(runId);
    expect(running).toMatchObject({ status: 'running', worker: 'victim', epoch: 1 });
    expect((await client.listWorkers()).map((w) => w.name)).toEqual(['victim']);

    // A live worker that could run the run too, and reaps dead workers.
    const observer = await startTestWorker(queue, { name: 'observer', resources: 'foo=2', leaseMs: 600 });

    const killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await victim.exited;

    // (b) lost once its lease (2 s) ran out, with a reason naming the dead worker (how soon: npm run bench).
    const lost = await waitForStatus(client, runId, ['lost', 'completed', 'failed', 'canceled']);
    expect(lost.status).toBe('lost');
    expect(lost.reason).toMatch(/victim/);
    expect(lost.reason).toMatch(/lease/);
    expect(lost.worker).toBe('victim');
    expect(lost.epoch).toBe(1);
    // It ended when its worker was last known alive (its last heartbeat, every lease/3), not when it was reaped.
    expect(lost.endedAt).toBeGreaterThanOrEqual(running.startedAt!);
    expect(lost.endedAt).toBeLessThanOrEqual(killedAt + heartbeatIntervalMs(2000));
    // The observer logs once its reap call has returned, a moment after Redis shows the run lost.
    await waitFor('the observer to report the dead worker', () =>
      messages(observer.logs).includes('Worker victim stopped renewing its lease: its runs are lost'),
    );
    const log = await client.readLog(runId);
    expect(log.at(-1)).toMatchObject({ kind: 'end', status: 'lost' });

    // (c) The reservation and every key of the dead worker are gone.
    const base = client.keys.base;
    expect(await client.redis.keys(`${base}worker:victim*`)).toEqual([]);
    expect(await client.redis.zscore(client.keys.workers, 'victim')).toBeNull();
    expect((await client.listWorkers()).map((w) => w.name)).toEqual(['observer']);
    const listed = await fitq(['workers', '--json'], { queue });
    expect(listed.exitCode).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((w) => w.name)).toEqual(['observer']);

    // ... and the lost run is not staged again: a worker with room (foo=2) takes
    // a later run that needs all of it, and the lost run stays as it was.
    expect(await client.redis.zscore(client.keys.staged(stagedShape('foo=1')), runId)).toBeNull();
    const probe = (await client.stage({ command: ['true'], resources: 'foo=2' })).runs[0]!.id;
    expect(await client.waitForEnd(probe)).toMatchObject({ status: 'completed', worker: 'observer' });
    expect(await client.getRun(runId)).toMatchObject({ status: 'lost', epoch: 1, worker: 'victim' });
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(pid)); // never started a second time
    const listedRuns = await fitq(['runs', '--json'], { queue });
    expect(listedRuns.exitCode).toBe(0);
    expect((JSON.parse(listedRuns.stdout) as { runs: RunRecord[] }).runs.find((run) => run.id === runId)).toMatchObject({
      status: 'lost',
      epoch: 1,
    });

    // (d) The name can be taken again; the new worker starts with its full capacity.
    await observer.worker.stop();
    const fresh = (await client.stage({ command: ['sh', '-c', 'echo "worker=$FITQ_WORKER"'], resources: 'foo=2' })).runs[0]!.id;
    const again = await fitq(['worker', '-r', 'foo=2', '--name', 'victim', '--run-once', '--log-format', 'json'], {
      queue,
      timeoutMs: 20_000,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    const againMessages = messages(parseJsonLog(again.stdout));
    expect(againMessages[0]).toMatch(/^Starting worker victim: /);
    expect(againMessages).toContain(`Run ${fresh} completed`);
    expect(againMessages.join('\n')).not.toMatch(/lost its registration/);
    expect(await client.getRun(fresh)).toMatchObject({ status: 'completed', worker: 'victim', epoch: 1 });
    expect((await client.readLog(fresh)).filter((e) => e.kind === 'line').map((e) => (e as { line: string }).line)).toEqual([
      'worker=victim',
    ]);
    expect(await client.getRun(runId)).toMatchObject({ status: 'lost', epoch: 1 });
    expect(await client.listWorkers()).toEqual([]);
  });
});

describe('`fitq logs -f` on a run whose worker is killed with SIGKILL', () => {
  it('reaps the worker itself as its lease runs out, says the run is lost and exits 1 (as fitq wait); the run ended at its last heartbeat', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(tempDir(), 'pid');
    const { runs } = await client.stage({ command: pidScript(pidFile, 'echo started; sleep 60'), resources: 'foo=1' });
    const runId = runs[0]!.id;
    const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    await waitUntilRunning(client, runId, pidFile);
    const { startedAt } = await client.getRun(runId);

    // The follower is the only one left to notice: no other worker, no other command.
    const { child: follower, stdout: followed, stderr: followerErr } = spawnFitq(queue, ['logs', '-f', runId]);
    await waitFor('the follower to print the run\'s output', () => followed().includes('started\n'), 30_000);

    const killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await victim.exited;
    const result = await follower;

    expect(result.timedOut, `follower still waiting; stderr: ${followerErr()}`).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(followerErr().trim()).toBe(`run ${runId} lost: worker victim stopped renewing its lease`);
    const lost = await client.getRun(runId);
    expect(lost).toMatchObject({ status: 'lost', worker: 'victim' });
    expect(lost.endedAt).toBeGreaterThanOrEqual(startedAt!);
    expect(lost.endedAt).toBeLessThanOrEqual(killedAt + heartbeatIntervalMs(2000));
  });
});

describe('a worker that stops answering (SIGSTOP)', () => {
  it('killed on this machine, has its runs shown as `running (worker not responding)` at once, its lease still running', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(tempDir(), 'pid');
    const { runs } = await client.stage({ command: pidScript(pidFile, 'sleep 60'), resources: 'foo=1' });
    const runId = runs[0]!.id;
    // A long lease: it is the dead process that says it, not a missed heartbeat.
    const victim = spawnCliWorker(queue, ['-r', 'foo=1', '--name', 'killed', '--lease', '600']);
    await waitUntilRunning(client, runId, pidFile);
    const before = await fitq(['runs'], { queue });
    expect(before.stdout).toMatch(new RegExp(`${runId}\\s+running\\s+\\S+\\s+foo=1`));

    victim.process.kill('SIGKILL');
    await victim.exited;
    const gone = `not responding \\(its process ${victim.pid} on this machine is gone, last heartbeat \\d+s ago, lease ends in \\d+m\\d+s\\)`;
    const [table, shown, workers] = await Promise.all([fitq(['runs'], { queue }), fitq(['runs', 'show', runId], { queue }), fitq(['workers'], { queue })]);
    expect(table.stdout).toMatch(new RegExp(`${runId}\\s+running \\(worker not responding\\)\\s+\\S+\\s+foo=1\\s.*worker killed ${gone}`));
    expect(shown.stdout).toMatch(/^status:\s+running \(worker not responding\)$/m);
    expect(shown.stdout).toMatch(new RegExp(`^reason:\\s+worker killed ${gone}$`, 'm'));
    expect(workers.stdout.split('\n')[1]).toMatch(new RegExp(`^killed\\s.*\\s${gone}$`));
    const json = (JSON.parse((await fitq(['runs', '--json'], { queue })).stdout) as { runs: RunRecord[] }).runs;
    expect(json[0]).toMatchObject({ id: runId, status: 'running', workerResponding: false });
  });

  it('is shown as not responding by `fitq workers` and its runs as such by `fitq runs`, then reaped once its lease lapses', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const pidFile = join(tempDir(), 'pid');
    const { runs } = await client.stage({ command: pidScript(pidFile, 'sleep 120'), resources: 'foo=1' });
    const runId = runs[0]!.id;
    // Beats every 20 s: not responding after 40 s without one, lapsed after 60 s. The 20 s between
    // are for the two commands that show it: a loaded machine took more than 8 s for them, and a CI
    // run once more than the 15 s a 45 s lease left (the worker was reaped before `fitq workers` read it).
    const lease = 60_000;
    const sleeper = spawnCliWorker(queue, ['-r', 'foo=1', '--name', 'sleeper', '--lease', String(lease / 1000)]);
    await waitUntilRunning(client, runId, pidFile);

    const live = await fitq(['workers'], { queue });
    expect(live.exitCode, live.stderr).toBe(0);
    expect(live.stdout.split('\n')[1]).toMatch(/^sleeper\s.*\s\d+s ago$/);

    const stoppedAt = Date.now();
    sleeper.process.kill('SIGSTOP');
    await waitFor('the sleeper to be judged not responding', async () => {
      const [worker] = await client.listWorkers();
      return worker && !worker.liveness.responding;
    }, lease, 100);
    const [workers, runsTable] = await Promise.all([fitq(['workers'], { queue }), fitq(['runs'], { queue })]);
    const notResponding = /not responding \(last heartbeat (\d+)s ago, lease ends in (\d+)s\)/;
    const [, age, left] = notResponding.exec(workers.stdout.split('\n')[1] ?? '') ?? [];
    expect(Number(age), workers.stdout).toBeGreaterThanOrEqual((2 * lease) / 3 / 1000);
    expect(Number(left)).toBeLessThanOrEqual(lease / 3 / 1000);
    expect(runsTable.stdout).toMatch(new RegExp(`${runId}\\s+running\\s.*worker sleeper ${notResponding.source}`));
    expect((await client.getRun(runId)).reason).toMatch(new RegExp(`^worker sleeper ${notResponding.source}$`));
    expect((await client.listWorkers()).map(workerToJson)).toMatchObject([{ name: 'sleeper', responding: false }]);

    // Once the lease has lapsed by the server's clock, a read shows it as the reaper will leave it: not shown, its run lost.
    const deadline = Number(await client.redis.zscore(client.keys.workers, 'sleeper'));
    await waitFor('the lease to lapse', async () => {
      const [seconds, micros] = await client.redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > deadline;
    }, lease, 100);
    const after = await fitq(['workers'], { queue });
    expect(after.stdout.trim()).toBe('No live workers.');
    const lost = await client.getRun(runId);
    expect(lost).toMatchObject({ status: 'lost', worker: 'sleeper' });
    expect(lost.endedAt).toBeLessThanOrEqual(stoppedAt + heartbeatIntervalMs(lease));
  });
});

describe('runs staged with --retries', () => {
  it('are re-staged at their place when their worker dies, and a worker restarted under the same name starts clean', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const marker = join(dir, 'attempted');
    // The first attempt records its pid and hangs; the second finishes at once.
    const script = `if [ -e '${marker}' ]; then echo "second attempt"; exit 0; fi; touch '${marker}'; echo "first attempt"`;
    const staged = await fitq(['stage', '--retries', '1', '-r', 'foo=2', '--', ...pidScript(pidFile, `${script}; sleep 60`)], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const retried = staged.stdout.trim();
    const victim = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const firstPid = await waitUntilRunning(client, retried, pidFile);
    const later = (await client.stage({ command: ['true'], resources: 'foo=2' })).runs[0]!.id;
    await waitFor('the first attempt to print', async () => (await client.readLog(retried)).length > 0);

    victim.process.kill('SIGKILL');
    await victim.exited;
    // Once its lease runs out a read shows the run as the reaper will put it: staged again (the worker registering again below reaps it).
    const restaged = await waitFor('the run to be re-staged', async () => {
      const run = await client.getRun(retried);
      return run.status === 'staged' ? run : undefined;
    }, 10_000, 100);
    expect(restaged).toMatchObject({ retries: 1, restaged: 1, epoch: 1 });
    expect(restaged.restagedReason).toMatch(/victim.*lease.*re-staged 1 of 1/);
    expect(restaged.worker).toBeUndefined();
    await waitFor(`the first attempt's process ${firstPid} to be gone`, () => groupMembers(firstPid).length === 0);

    const again = await fitq(['worker', '-r', 'foo=2', '--name', 'victim', '--run-once', '--concurrency', '1', '--log-format', 'json'], {
      queue,
      timeoutMs: 20_000,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    const log = messages(parseJsonLog(again.stdout));
    expect(log.indexOf(`Run ${retried} completed`)).toBeGreaterThan(-1);
    expect(log.indexOf(`Run ${retried} completed`)).toBeLessThan(log.indexOf(`Run ${later} started`));
    expect(await client.getRun(retried)).toMatchObject({ status: 'completed', epoch: 2, restaged: 1, worker: 'victim' });
    const entries = await client.readLog(retried);
    expect(entries.map((e) => (e.kind === 'line' ? e.line : e.kind))).toEqual(['first attempt', 'restaged', 'second attempt', 'end']);
    expect(await client.getRun(later)).toMatchObject({ status: 'completed' });
  });

  it('move on from a worker cut off past its lease (SIGSTOP); once back, that worker kills its copy and records nothing over it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const marker = join(dir, 'attempted');
    const script = `if [ -e '${marker}' ]; then echo "second attempt"; sleep 1; echo "second done"; exit 0; fi; touch '${marker}'; echo "first attempt"; sleep 60; echo "first done"`;
    const { runs } = await client.stage({ command: pidScript(pidFile, script), resources: 'foo=2', retries: 1 });
    const runId = runs[0]!.id;
    const sleeper = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'sleeper', '--lease', '2', '--kill-grace', '1']);
    const firstPid = await waitUntilRunning(client, runId, pidFile);
    await waitFor('the first attempt to print', async () => (await client.readLog(runId)).length > 0);

    sleeper.process.kill('SIGSTOP');
    const observer = await startTestWorker(queue, { name: 'observer', resources: 'foo=2', leaseMs: 1000 });
    await waitFor('the run to move to the observer', async () => (await client.getRun(runId)).epoch === 2);
    sleeper.process.kill('SIGCONT');

    await sleeper.waitForMessage('Worker sleeper lost its registration (lease expired or Redis lost its data); stopping its runs');
    await waitFor(`the first attempt's process ${firstPid} to be killed`, () => groupMembers(firstPid).length === 0);
    const done = await client.waitForEnd(runId);
    expect(done).toMatchObject({ status: 'completed', worker: 'observer', epoch: 2, restaged: 1 });
    const lines = (await client.readLog(runId)).flatMap((e) => (e.kind === 'line' ? [e.line] : []));
    expect(lines).toEqual(['first attempt', 'second attempt', 'second done']);
    expect(messages(observer.logs)).toContain(`Run ${runId} completed`);
    // The cut-off worker says its copy's end was not recorded, and why; it never claims it failed.
    await sleeper.waitForMessage(new RegExp(`^Run ${runId} was killed by signal SIGTERM but its result was not recorded: `));
    expect(sleeper.messages().filter((message) => message.startsWith(`Run ${runId} `))).toEqual([
      `Run ${runId} started`,
      `Run ${runId} was killed by signal SIGTERM but its result was not recorded: this worker no longer holds its registration (its lease ran out, or Redis lost its data); the run ends when that registration is reaped`,
    ]);
  });

  it('whose cancel was requested while their worker was dead end canceled once it is reaped, never re-staged; `fitq cancel` returns', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const attempts = join(dir, 'attempts');
    const staged = await fitq(['stage', '--retries', '2', '-r', 'foo=2', '--', ...pidScript(pidFile, `echo attempt >> '${attempts}'; sleep 60`)], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();
    const victim = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'victim', '--lease', '2', '--kill-grace', '1']);
    const pid = await waitUntilRunning(client, runId, pidFile);

    victim.process.kill('SIGKILL');
    await victim.exited;
    // Nothing reaps the dead worker yet (no other worker, no command): the cancel is pending, never acted on.
    expect(await client.cancelRuns([runId])).toMatchObject([{ outcome: 'requested', run: { status: 'running' } }]);
    // `fitq cancel` waits, reaps the worker once its lease runs out, and sees the run canceled.
    const cancel = await fitq(['cancel', runId], { queue, timeoutMs: 20_000 });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(cancel.stdout.trim()).toBe(`Run ${runId} canceled`);
    const run = await client.getRun(runId);
    expect(run).toMatchObject({ status: 'canceled', reason: 'canceled (worker victim stopped renewing its lease)', worker: 'victim', epoch: 1 });
    expect(run.restaged).toBeUndefined();
    expect((await client.readLog(runId)).map((entry) => (entry.kind === 'end' ? `end ${entry.status}` : entry.kind))).toEqual(['end canceled']);
    await waitFor(`the run's process ${pid} to be gone`, () => groupMembers(pid).length === 0);

    // A live worker with room runs a later run that needs all of it, and never the canceled one.
    const observer = await startTestWorker(queue, { name: 'observer', resources: 'foo=2', leaseMs: 1000 });
    const probe = (await client.stage({ command: ['true'], resources: 'foo=2' })).runs[0]!.id;
    expect(await client.waitForEnd(probe)).toMatchObject({ status: 'completed', worker: 'observer' });
    expect(await client.getRun(runId)).toMatchObject({ status: 'canceled', epoch: 1 });
    expect(readFileSync(attempts, 'utf8')).toBe('attempt\n');
    expect(messages(observer.logs).filter((message) => message.includes(runId))).toEqual([]);
  });
});

describe('worker names', () => {
  it('refuses `fitq worker --name X` while a live worker is named X, leaving that worker alone', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const name = `taken-${queue}`;
    const { worker, logs } = await startTestWorker(queue, { name, resources: 'a=1', leaseMs: 1500 });
    const before = await client.redis.hget(client.keys.worker(name).info, 'token');

    const result = await fitq(['worker', '-r', 'a=1', '--name', name], { queue, timeoutMs: 20_000 });
    expect(result.exitCode).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`'${name}'`);
    expect(result.stderr).not.toContain('    at ');

    // The live worker keeps its registration and its lease.
    expect(await client.redis.hget(client.keys.worker(name).info, 'token')).toBe(before);
    const [listed] = await client.listWorkers();
    expect(listed).toMatchObject({ name, pid: process.pid });
    expect(messages(logs).join('\n')).not.toMatch(/lost its registration/);
    expect(worker.name).toBe(name);
  });
});

describe('a worker whose lease lapses while it stops gracefully', () => {
  it('terminates its runs as its registration is reaped (the run is re-staged, not run twice), and does not register again', async () => {
    // A Redis of its own: it is paused below.
    const own = await startRedisServer();
    const queue = newQueue();
    const client = await FitqClient.connect({ redisUrl: own.url, queue });
    try {
      const name = `lapsing-${queue}`;
      const pidFile = join(tempDir(), 'pid');
      const runId = (await client.stage({ command: pidScript(pidFile, 'sleep 60 & wait'), resources: 'foo=1', retries: 1 })).runs[0]!.id;
      const { worker, logs } = await startTestWorker(queue, { redisUrl: own.url, name, resources: 'foo=1', leaseMs: 600, killGraceMs: 1000 });
      const pgid = await waitUntilRunning(client, runId, pidFile);

      const stopped = worker.stop();
      expect(messages(logs)).toContain(`Stopping worker ${name}`);
      // Redis answers nothing for longer than the lease: the heartbeat that follows is refused.
      await client.redis.call('CLIENT', 'PAUSE', 2000, 'ALL');
      const restaged = await waitForStatus(client, runId, ['staged', 'lost', 'completed', 'failed'], 10_000);
      expect(restaged).toMatchObject({ status: 'staged', restaged: 1, restagedReason: `worker ${name} stopped renewing its lease (re-staged 1 of 1)` });
      // Another worker may start it now: this worker's copy must be gone.
      await waitFor(`run process group ${pgid} to be terminated`, () => groupMembers(pgid).length === 0);
      await stopped;

      expect(worker.activeRuns).toEqual([]);
      const said = messages(logs);
      expect(said).toContain(`Worker ${name} lost its registration (lease expired or Redis lost its data) while stopping; stopping its runs`);
      expect(said).toContainEqual(expect.stringMatching(new RegExp(`^Run ${runId} was killed by signal SIGTERM but its result was not recorded: `)));
      expect(said.join('\n')).not.toMatch(/registered again/);
      expect(await client.getRun(runId)).toMatchObject({ status: 'staged', restaged: 1 });
      expect(await client.listWorkers()).toEqual([]);
    } finally {
      await client.close();
      await own.dispose();
    }
  });
});

describe('a worker stopped while it re-registers', () => {
  it('registers no more once its lost registration\'s runs are gone, and exits 0', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const name = `rereg-${queue}`;
    // The run ignores SIGTERM: the re-registration waits the kill grace for it.
    const runId = (await client.stage({ command: ['sh', '-c', "trap '' TERM; sleep 60"], resources: 'foo=1' })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'foo=1', '--name', name, '--lease', '3', '--kill-grace', '3']);
    await worker.waitForMessage(`Run ${runId} started`);
    // Its registration is gone (as when Redis lost its data): the next heartbeat finds it fenced.
    await client.redis.hset(client.keys.worker(name).info, 'token', 'another');
    await worker.waitForMessage(`Worker ${name} lost its registration (lease expired or Redis lost its data); stopping its runs`);
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    const said = worker.messages();
    expect(said.join('\n')).not.toMatch(/registered again|already named/);
    expect(said).toContain(`Worker ${name} stopped`);
  });
});

describe('stopping a CLI worker with SIGTERM', () => {
  it('lets the running run finish, claims nothing new, deregisters and exits 0', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const goFile = join(dir, 'go');
    const name = `graceful-${queue}`;
    const { runs } = await client.stage({
      command: pidScript(pidFile, `while [ ! -e '${goFile}' ]; do sleep 0.02; done; echo finished`),
      resources: 'foo=1',
    });
    const runId = runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'foo=2', '--name', name]);
    const pgid = await waitUntilRunning(client, runId, pidFile);

    process.kill(worker.pid, 'SIGTERM');
    await worker.waitForMessage(`Stopping worker ${name}`);
    expect(worker.messages()).toContain('Stopping: letting 1 run finish; press Ctrl-C again to terminate them');
    // A run staged now is not claimed by the stopping worker.
    const later = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    // The run is still going, and so is the worker, waiting for it.
    expect(isAlive(pgid)).toBe(true);
    expect((await client.getRun(runId)).status).toBe('running');
    expect(worker.process.exitCode).toBeNull();

    writeFileSync(goFile, '');
    const exit = await worker.exited;
    expect(exit, worker.stderr()).toEqual({ exitCode: 0, signal: undefined });
    expect(await client.getRun(runId)).toMatchObject({ status: 'completed', exitCode: 0, worker: name });
    expect(await client.getRun(later)).toMatchObject({ status: 'staged' });
    expect(worker.messages()).toEqual(
      expect.arrayContaining([`Stopping worker ${name}`, `Run ${runId} completed`, `Worker ${name} stopped`]),
    );
    expect(worker.messages()).not.toContain(`Scheduling run ${later} (requires foo=1)`);
    expect(await client.listWorkers()).toEqual([]);
    expect(groupMembers(pgid)).toEqual([]);
  });

  it('a Ctrl-C while the worker still registers is not lost: it says it stops once up, and a second one ends it at once', async () => {
    // A "Redis" that accepts the connection and never answers: the worker stays in its start.
    let connections = 0;
    const silent = createServer((socket) => {
      connections += 1;
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const worker = spawnCliWorker(newQueue(), ['-r', 'foo=1'], `redis://127.0.0.1:${port}`);
      await waitFor('the worker to connect', () => connections > 0);
      process.kill(worker.pid, 'SIGINT');
      await waitFor('the worker to say it stops once up', () =>
        worker.stderr().includes('Stopping as soon as the worker has registered; press Ctrl-C again to quit now'),
      );
      expect(worker.process.exitCode).toBeNull();
      process.kill(worker.pid, 'SIGINT');
      expect(await worker.exited).toEqual({ exitCode: undefined, signal: 'SIGINT' });
    } finally {
      silent.close();
    }
  });

  it('says there is nothing to wait for when no run is running, and exits 0', async () => {
    const queue = newQueue();
    const name = `idle-${queue}`;
    const worker = spawnCliWorker(queue, ['-r', 'foo=1', '--name', name]);
    await worker.waitForMessage(`Worker resources: foo=1`);
    process.kill(worker.pid, 'SIGINT');
    expect(await worker.exited, worker.stderr()).toEqual({ exitCode: 0, signal: undefined });
    expect(worker.messages()).toEqual(expect.arrayContaining(['Stopping: no runs to wait for', `Worker ${name} stopped`]));
    expect(worker.stdout()).not.toContain('Ctrl-C again');
  });

  it('terminates the runs on a second SIGTERM (to their process group): re-staged at their place with retries left, else lost, never failed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = tempDir();
    const name = `impatient-${queue}`;
    const pidFiles = [join(dir, 'retried'), join(dir, 'plain')];
    // Its first attempt hangs; the next one ends at once.
    const marker = join(dir, 'attempted');
    const once = `if [ -e '${marker}' ]; then exit 0; fi; touch '${marker}'; sleep 60 & wait`;
    const retried = (await client.stage({ command: pidScript(pidFiles[0]!, once), resources: 'foo=1', retries: 1 })).runs[0]!.id;
    const plain = (await client.stage({ command: pidScript(pidFiles[1]!, 'sleep 60 & wait'), resources: 'foo=1' })).runs[0]!.id;
    // A long grace period: the runs must end from SIGTERM, not from a later SIGKILL.
    const worker = spawnCliWorker(queue, ['-r', 'foo=2', '--name', name, '--kill-grace', '30']);
    const pgids = [await waitUntilRunning(client, retried, pidFiles[0]!), await waitUntilRunning(client, plain, pidFiles[1]!)];
    for (const pgid of pgids) await waitFor('the run to have its background child', () => groupMembers(pgid).length >= 2);
    // Staged after them, with the same demands: it waits behind the re-staged run.
    const later = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;

    process.kill(worker.pid, 'SIGTERM');
    await worker.waitForMessage('Stopping: letting 2 runs finish; press Ctrl-C again to terminate them');
    expect((await client.getRun(retried)).status).toBe('running');

    const secondAt = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    const exit = await worker.exited;
    expect(exit, worker.stderr()).toEqual({ exitCode: 0, signal: undefined });
    expect(Date.now() - secondAt).toBeLessThan(10_000);
    for (const pgid of pgids) expect(groupMembers(pgid)).toEqual([]);

    const why = `its worker ${name} was stopped (second interrupt)`;
    const restaged = await client.getRun(retried);
    expect(restaged).toMatchObject({ status: 'staged', retries: 1, restaged: 1, restagedReason: `${why} (re-staged 1 of 1)`, epoch: 1 });
    expect(restaged.worker).toBeUndefined();
    expect(await client.redis.zrange(client.keys.staged(stagedShape('foo=1')), 0, -1)).toEqual([retried, later]);
    const lost = await client.getRun(plain);
    expect(lost).toMatchObject({ status: 'lost', reason: why, worker: name });
    expect(lost.signal).toBeUndefined();
    expect(lost.exitCode).toBeUndefined();
    expect(worker.messages()).toEqual(
      expect.arrayContaining([
        'Interrupted again: terminating 2 runs',
        `Run ${retried} terminated (signal SIGTERM) as ${why}: re-staged`,
        `Run ${plain} terminated (signal SIGTERM) as ${why}: lost`,
        `Worker ${name} stopped`,
      ]),
    );
    expect(worker.messages().join('\n')).not.toMatch(/failed/);
    expect(await client.listWorkers()).toEqual([]);

    // Its retry is used: the next worker runs it before the later run.
    const again = await fitq(['worker', '-r', 'foo=1', '--run-once', '--concurrency', '1', '--log-format', 'json'], { queue, timeoutMs: 20_000 });
    expect(again.exitCode, again.stderr).toBe(0);
    const log = messages(parseJsonLog(again.stdout));
    expect(log.indexOf(`Run ${retried} started`)).toBeGreaterThan(-1);
    expect(log.indexOf(`Run ${retried} started`)).toBeLessThan(log.indexOf(`Run ${later} started`));
  });

  it('still records a run that failed on its own just before the second SIGTERM as failed, its end still on its way to Redis', async () => {
    // A Redis of its own: it is paused below.
    const own = await startRedisServer();
    const queue = newQueue();
    const client = await FitqClient.connect({ redisUrl: own.url, queue });
    try {
      const dir = tempDir();
      const go = join(dir, 'go');
      const name = `pausing-${queue}`;
      const pidFiles = [join(dir, 'failing'), join(dir, 'hanging')];
      const waitForGo = `while [ ! -e '${go}' ]; do sleep 0.02; done; echo "giving up"; exit 3`;
      const failing = (await client.stage({ command: pidScript(pidFiles[0]!, waitForGo), resources: 'foo=1' })).runs[0]!.id;
      const hanging = (await client.stage({ command: pidScript(pidFiles[1]!, 'sleep 60 & wait'), resources: 'foo=1' })).runs[0]!.id;
      const worker = spawnCliWorker(queue, ['-r', 'foo=2', '--name', name, '--kill-grace', '30'], own.url);
      const failingPid = await waitUntilRunning(client, failing, pidFiles[0]!);
      await waitUntilRunning(client, hanging, pidFiles[1]!);

      // Redis holds every command for a while, so the failing run's output and end wait to be written
      // (long enough for both interrupts on a loaded machine; the test checks they came in time).
      const PAUSE_MS = 15_000;
      await client.redis.call('CLIENT', 'PAUSE', PAUSE_MS, 'ALL');
      const pausedAt = Date.now();
      writeFileSync(go, '');
      await waitFor('the failing run to exit on its own', () => !isAlive(failingPid));
      process.kill(worker.pid, 'SIGTERM');
      await worker.waitForMessage('Stopping: letting 2 runs finish; press Ctrl-C again to terminate them');
      process.kill(worker.pid, 'SIGTERM');
      await worker.waitForMessage('Interrupted again: terminating 2 runs');
      // Only telling while Redis is still paused: the failing run's end is not yet written.
      expect(Date.now() - pausedAt, 'ms from the pause to the second SIGTERM').toBeLessThan(PAUSE_MS - 1000);

      expect(await worker.exited, worker.stderr()).toEqual({ exitCode: 0, signal: undefined });
      expect(await client.getRun(failing)).toMatchObject({ status: 'failed', exitCode: 3, reason: 'exit code 3' });
      const why = `its worker ${name} was stopped (second interrupt)`;
      expect(await client.getRun(hanging)).toMatchObject({ status: 'lost', reason: why });
      expect(worker.messages()).toEqual(
        expect.arrayContaining([`Run ${failing} failed (exit code 3)`, `Run ${hanging} terminated (signal SIGTERM) as ${why}: lost`]),
      );
      const printed = (await client.readLog(failing)).flatMap((e) => (e.kind === 'line' ? [e.line] : []));
      expect(printed).toEqual(['giving up']);
    } finally {
      await client.close();
      await own.dispose();
    }
  });
});
