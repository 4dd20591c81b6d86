/**
 * A worker that runs out of file descriptors (its limit, and its spawn
 * helper's, lowered with `prlimit --pid` once it runs, so it is the runs it
 * starts that use them up) carries on: a run it cannot start (spawning fails with EMFILE, or its
 * --output file cannot be opened) is its worker's fault, not the run's, so
 * it is put back as staged, without spending a retry, with the reason; the
 * worker claims less for a while and starts it once descriptors are free.
 * No run is left `running`, none ends failed or lost.
 */
import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Descriptors a process has open now. */
const openDescriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/**
 * Lowers a process's limit of open descriptors to `room` more than it has
 * open once it has opened what it opens at its start (its Redis
 * connections, its helpers' channels): no event says when that is done,
 * so once the count has stayed the same for a second. (Measured earlier,
 * on a loaded machine, a worker that went on to open 9 more was left too
 * little room ever to spawn a run.)
 */
const leaveRoom = async (pid: number, room: number) => {
  let last = -1;
  let same = 0;
  const settled = await waitFor(`the descriptors of ${pid} to settle`, () => {
    const now = openDescriptors(pid);
    same = now === last ? same + 1 : 0;
    last = now;
    return same >= 40 && now;
  });
  const limit = settled + room;
  return execa('prlimit', ['--pid', String(pid), `--nofile=${limit}:${limit}`]);
};

describe('a worker out of file descriptors', () => {
  it('puts back the runs it cannot start, keeps running, and runs them all once descriptors are free', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-emfile-'));
    dirs.push(dir);
    const go = join(dir, 'go');
    const worker = spawnCliWorker(queue, ['-r', 'cpu=12', '--concurrency', '12', '--name', 'few-fds']);
    await worker.waitForMessage('Worker resources: cpu=12');
    // Room for a few runs, not twelve: in the two spawn helpers, which hold a run's pipes (three descriptors while
    // it runs, sixteen to spawn), and in the worker, which holds its output file.
    const helpers = await waitFor('the spawn helpers to start', async () => {
      const found = await execa('pgrep', ['-P', String(worker.pid), '-f', 'spawner/helper.js'], { reject: false });
      const pids = found.stdout.split('\n').filter(Boolean).map(Number);
      return pids.length === 2 && pids;
    });
    for (const helper of helpers) await leaveRoom(helper, 24);
    await leaveRoom(worker.pid, 24);

    // Every run waits for the test; half of them also write their output to a file.
    const waitForGo = `while [ ! -e '${go}' ]; do sleep 0.05; done; echo done`;
    const staged = await client.stage(
      Array.from({ length: 12 }, (_, i) => ({
        command: ['sh', '-c', waitForGo],
        resources: 'cpu=1',
        ...(i % 2 === 0 ? { output: { stdout: join(dir, `out-${i}.log`) } } : {}),
      })),
    );
    const ids = staged.runs.map((run) => run.id);
    await worker.waitForMessage(/^Run \S+ could not be started: its worker few-fds ran out of file descriptors .*: put back as staged$/);
    const runs = async () => new Map((await client.listRuns()).map((run: RunRecord) => [run.id, run]));
    const put = (await runs()).get(
      worker.messages().find((message) => message.includes('put back as staged'))!.split(' ')[1]!,
    )!;
    expect(put.restagedReason).toMatch(/^its worker few-fds ran out of file descriptors \(.+\) \(put back: it never started\)$/);
    // Not a retry spent: it had none, and it is staged, not lost.
    expect(['staged', 'running']).toContain(put.status);
    expect(worker.process.exitCode).toBeNull();

    writeFileSync(go, '');
    await waitFor('every run to end', async () => {
      const now = await runs();
      return ids.every((id) => ['completed', 'failed', 'lost', 'canceled'].includes(now.get(id)!.status));
    }, 120_000);
    const ended = await runs();
    expect(ids.map((id) => [id, ended.get(id)!.status])).toEqual(ids.map((id) => [id, 'completed']));
    for (let i = 0; i < 12; i += 2) expect(readFileSync(join(dir, `out-${i}.log`), 'utf8')).toBe('done\n');
    expect(worker.stderr()).toBe('');
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  }, 180_000);
});
