/**
 * `fitq worker --enforce mem,cpu`: each run in a cgroup of its own, held to
 * its mem and cpu demands, its use counted by the kernel. Tested for real
 * where the machine lets a worker make cgroups (as root with the v1 memory
 * controller, or a delegated v2 hierarchy); elsewhere these tests are
 * skipped, and say why. Real CLI workers, real processes, a real redis-server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { closeCgroupLayout, openCgroupLayout } from '../../src/worker/usage/cgroup-host.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { BIN, connectClient, fitq, newQueue, redisUrl } from '../support/fitq.js';
import { isAlive, killRememberedProcess, rememberProcess, type RememberedGroup } from '../support/processes.js';
import { memoryHog } from '../support/memory-hog.js';
import { waitFor } from '../support/wait.js';

/** Whether this machine lets a worker make cgroups: tried as a worker would, then undone. */
const layout = openCgroupLayout(new Set(['mem', 'cpu']));
const why = 'why' in layout ? layout.why : undefined;
if ('why' in layout) console.warn(`Skipping the --enforce tests that need cgroups: ${layout.why}`);
else closeCgroupLayout(layout);
/** Where the workers this test starts put their cgroups: beside this process's own (they are in its cgroup). */
const workerDirsParent = 'why' in layout ? undefined : dirname(layout.memory);

const daemons: RememberedGroup[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const daemon of daemons.splice(0)) killRememberedProcess(daemon);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('fitq worker --enforce', () => {
  it('refuses what it cannot enforce, quoting it (exit 2)', async () => {
    const result = await fitq(['worker', '--enforce', 'mem,gpu'], { queue: newQueue() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trimEnd()).toBe("Error: expected --enforce to list mem and cpu (comma-separated), got 'gpu'");
  });

  it.skipIf(why !== undefined || process.getuid?.() !== 0)('does not start where it may not make cgroups, and says why (exit 1)', async () => {
    // As nobody, the v1 hierarchies (root's) are out of reach.
    const result = await execa('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'node', BIN, 'worker', '--enforce', 'mem,cpu', '-r', 'cpu=1'], {
      env: { FITQ_REDIS_URL: redisUrl(), FITQ_QUEUE: newQueue(), HOME: tmpdir() },
      reject: false,
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^Error: --enforce mem,cpu: cannot hold runs to their demands here: cannot create a cgroup in \/sys\/fs\/cgroup\/.+ \(EACCES\): it needs root, or a delegated hierarchy$/);
  });
});

describe.skipIf(why !== undefined)('runs held to their demands in cgroups', () => {
  it('ends a run past its memory limit failed, "out of memory", and carries on', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2 mem=1G', '--enforce', 'mem,cpu', '--name', 'held']);
    await worker.waitForMessage(/^Runs are held to their mem and cpu demands in cgroups \(v[12]\) below \/sys\/fs\/cgroup\/.+; a run without such a demand is measured, not limited$/);
    const [greedy, modest] = (await client.stage([
      { command: memoryHog(300, 0), resources: 'mem=60M cpu=1' },
      { command: memoryHog(20, 0), resources: 'mem=200M cpu=1' },
    ])).runs.map((run) => run.id) as [string, string];
    const failed = await client.waitForEnd(greedy);
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/^out of memory: peak \d+\.\dM, limit 60M$/);
    expect(failed.usage).toMatchObject({ source: 'cgroup', memoryLimitBytes: 60e6, cpuLimit: 1 });
    expect(failed.usage!.oomKills).toBeGreaterThanOrEqual(1);
    expect((await client.waitForEnd(modest)).status).toBe('completed');
    const shown = await fitq(['runs', 'show', greedy], { queue });
    expect(shown.stdout).toMatch(/^memory: +\d+\.\dM peak, 1 process killed out of memory; mem=60M booked, enforced$/m);
    expect(shown.stdout).toMatch(/^measured: +by its cgroup$/m);
  });

  it('counts every process of a run, however short, and holds it to its CPU quota', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    spawnCliWorker(queue, ['-r', 'cpu=2 mem=1G', '--enforce', 'cpu', '--name', 'quota']);
    // Ten short children a /proc reading every second would all miss.
    const short = (await client.stage({ command: ['sh', '-c', `for i in 1 2 3 4 5 6 7 8 9 10; do ${memoryHog(40, 50).map((arg) => `'${arg}'`).join(' ')}; done`], resources: 'mem=100M' })).runs[0]!.id;
    const counted = await client.waitForEnd(short);
    expect(counted.status).toBe('completed');
    expect(counted.usage).toMatchObject({ source: 'cgroup' });
    expect(counted.usage!.cpuUserMs + counted.usage!.cpuSystemMs).toBeGreaterThan(500);
    expect(counted.usage!.peakMemoryBytes).toBeGreaterThan(40e6);
    // Not enforced (--enforce cpu only): measured, not limited.
    expect(counted.usage!.memoryLimitBytes).toBeUndefined();
    // A tenth of a CPU for 2 s of busy wall time: about 0.2 s of CPU, never the 2 s it would take unheld.
    const slow = (await client.stage({ command: memoryHog(1, 2000), resources: 'cpu=0.1' })).runs[0]!.id;
    const held = await client.waitForEnd(slow);
    expect(held.status).toBe('completed');
    expect(held.usage).toMatchObject({ cpuLimit: 0.1 });
    expect(held.usage!.cpuUserMs + held.usage!.cpuSystemMs).toBeLessThan(0.1 * held.usage!.wallMs + 400);
  });

  it('kills what escaped its run once the run ends, and removes its cgroups, the worker\'s too once it stops', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'mem=1G', '--enforce', 'mem', '--name', 'tidy']);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-enforce-'));
    dirs.push(dir);
    const pidFile = join(dir, 'daemon.pid');
    // A daemon out of its session with an empty environment: neither its group nor its token finds it; its cgroup does.
    const id = (await client.stage({ command: ['sh', '-c', `env -i setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & sleep 0.5`], resources: 'mem=50M' })).runs[0]!.id;
    const daemon = await waitFor('the daemon to write its pid', () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined));
    daemons.push(rememberProcess(daemon));
    expect((await client.waitForEnd(id)).status).toBe('completed');
    await waitFor('the daemon to be killed with its cgroup', () => !isAlive(daemon));
    const workerDir = join(workerDirsParent!, `fitq.${worker.pid}`);
    expect(existsSync(workerDir)).toBe(true);
    await waitFor('its run cgroup to be removed', () => !existsSync(join(workerDir, `${id}.1`)));
    worker.process.kill('SIGTERM');
    await worker.exited;
    expect(existsSync(workerDir)).toBe(false);
  });
});
