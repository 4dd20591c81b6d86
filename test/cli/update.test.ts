/**
 * fitq update through the real CLI, with real `fitq worker` processes:
 * new demands make a run fit (or wait), a new priority reorders what a
 * worker takes, edits racing claims never start a run with mixed demands,
 * signed runs are signed anew or refused, running and ended runs are refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseStoredResources, resourcesToJson } from '../../src/resources/spec.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, readRunData } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

async function stage(queue: string, args: string[]): Promise<string> {
  const staged = await fitq(['stage', ...args], { queue });
  expect(staged.exitCode, staged.stderr).toBe(0);
  return staged.stdout.trim();
}

describe('fitq update', () => {
  it('new demands: a run that did not fit is claimed at once, one that fit waits', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'gpu=1', '--name', 'uw']);
    await waitFor('the worker to register', async () => (await client.listWorkers()).some((live) => live.name === 'uw'), 30_000);
    const big = await stage(queue, ['-r', 'gpu=2', '--', 'true']);
    expect(await client.getRun(big)).toMatchObject({ status: 'staged' });

    const updated = await fitq(['update', big, '-r', 'gpu=1'], { queue });
    expect([updated.exitCode, updated.stdout.trim(), updated.stderr]).toEqual([0, `Run ${big} updated: resources gpu=2 -> gpu=1`, '']);
    expect(await client.waitForEnd(big)).toMatchObject({ status: 'completed', worker: 'uw', resources: { gpu: 1 }, requires: 'gpu=1' });

    // Paused, a run that fits is not claimed; grown past the worker, it waits after the resume.
    await client.setPaused(true);
    const [small, after] = (await client.stage({ command: ['true'], resources: 'gpu=1', repeat: 2 })).runs.map((run) => run.id) as [string, string];
    expect((await fitq(['update', small, '-r', 'gpu=2'], { queue })).exitCode).toBe(0);
    await client.setPaused(false);
    expect(await client.waitForEnd(after)).toMatchObject({ status: 'completed' });
    const waiting = await client.getRun(small);
    expect(waiting).toMatchObject({ status: 'staged', requires: 'gpu=2' });
    expect(waiting.reason).toMatch(/gpu/);
    expect(worker.messages()).not.toContain(`Run ${small} started`);
  });

  it('a new priority reorders which run the worker takes; the same priority keeps the staging order', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPaused(true);
    const ids = (await client.stage({ command: ['true'], resources: 'slot=1', repeat: 4 })).runs.map((run) => run.id);
    const [a, b, c, d] = ids as [string, string, string, string];
    expect((await fitq(['update', c, '--priority', '5'], { queue })).exitCode).toBe(0);
    expect((await fitq(['update', a, '--priority', '-1'], { queue })).exitCode).toBe(0);
    // Up and back down again: its place among priority 0 is where it was staged.
    expect((await fitq(['update', b, '--priority', '3'], { queue })).exitCode).toBe(0);
    expect((await fitq(['update', b, '--priority', '0'], { queue })).exitCode).toBe(0);

    const worker = spawnCliWorker(queue, ['-r', 'slot=1', '--name', 'order']);
    await client.setPaused(false);
    for (const id of ids) await client.waitForEnd(id);
    const started = worker.messages().filter((message) => / started$/.test(message) && message.startsWith('Run '));
    expect(started).toEqual([c, b, d, a].map((id) => `Run ${id} started`));
  });

  it('updating a running or ended run is refused with its status, and changes nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-update-'));
    const gate = join(dir, 'go');
    const running = await stage(queue, ['-r', 'slot=1', '--shell', '--', `while [ ! -e ${gate} ]; do sleep 0.05; done`]);
    const staged = await stage(queue, ['-r', 'slot=1', '--', 'true']);
    spawnCliWorker(queue, ['-r', 'slot=1', '--name', 'busy']);
    await waitFor('the run to start', async () => (await client.getRun(running)).status === 'running');

    // Every run is checked first: the staged one is not updated either.
    const refused = await fitq(['update', staged, running, '--priority', '3'], { queue });
    expect([refused.exitCode, refused.stdout, refused.stderr.trim()]).toEqual([
      2,
      '',
      `Error: run '${running}' is running: only staged or held runs can be updated`,
    ]);
    expect((await client.getRun(staged)).priority).toBe(0);

    writeFileSync(gate, '');
    expect(await client.waitForEnd(running)).toMatchObject({ status: 'completed' });
    const ended = await fitq(['update', running, '-r', 'slot=2'], { queue });
    expect([ended.exitCode, ended.stderr.trim()]).toEqual([2, `Error: run '${running}' is completed: only staged or held runs can be updated`]);
    expect(await client.getRun(running)).toMatchObject({ resources: { slot: 1 } });
    const unknown = await fitq(['update', 'nosuchrun', '--priority', '1'], { queue });
    expect([unknown.exitCode, unknown.stderr.trim()]).toEqual([2, "Error: unknown run 'nosuchrun'"]);
  });

  it('--dry-run shows old -> new and writes nothing; --json prints the updated runs; bad values name what was typed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(queue, ['-r', 'gpu=1', '--label', 'team=a', 'draft=1', '--', 'true']);
    const before = await client.redis.hgetall(client.keys.run(id));

    const dry = await fitq(['update', id.slice(0, 6), '--priority', '4', '--label', 'team=b', '--unlabel', 'draft', '--dry-run'], { queue });
    expect([dry.exitCode, dry.stdout.trim()]).toEqual([0, `Run ${id} would change: priority 0 -> 4; labels team=a draft=1 -> team=b`]);
    expect(await client.redis.hgetall(client.keys.run(id))).toEqual(before);

    const json = await fitq(['update', id, '--priority', '4', '-r', 'gpu=2,mem=1G', '--gpus', '0,1', '--json'], { queue });
    expect(json.exitCode, json.stderr).toBe(0);
    const [record] = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(record).toMatchObject({ id, status: 'staged', priority: 4, requires: 'gpu=2 mem=1G', pinnedGpus: [0, 1], labels: { team: 'a', draft: '1' } });
    expect(await client.getRun(id)).toMatchObject({ priority: 4, requires: 'gpu=2 mem=1G', pinnedGpus: [0, 1] });
    const same = await fitq(['update', id, '--priority', '4'], { queue });
    expect(same.stdout.trim()).toBe(`Run ${id} unchanged (already so)`);

    for (const [args, message] of [
      [['--priority', '2000000'], "expected --priority to be an integer from -1000000 to 1000000, got '2000000'"],
      [['--gpus', '0'], `run '${id}': --gpus '0' pins 1 device but the run demands gpu=2: list 2 devices`],
      [['--unlabel', 'nope'], "--unlabel 'nope': no run given has that label"],
      [['--priority', '3', 'mem=1G'], `'mem=1G' is no run id: give demands with -r and labels with --label`],
      [[], 'nothing to update: give --priority, -r, --label, --unlabel, --gpus or --time-limit'],
    ] as const) {
      const result = await fitq(['update', id, ...args], { queue });
      expect(result.exitCode, result.stderr).toBe(2);
      expect(result.stderr).toContain(message);
    }
    expect(await client.getRun(id)).toMatchObject({ priority: 4, requires: 'gpu=2 mem=1G' });
  });

  it('-r takes every word up to the next flag and changes only the demands it names; NAME=0 removes one', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(queue, ['-r', 'gpu=1', 'mem=8G', 'cpu=2', '--label', 'team=a', '--', 'true']);

    const changed = await fitq(['update', id, '-r', 'cpu=1', 'mem=2G', '--label', 'team=b', 'draft=1'], { queue });
    expect([changed.exitCode, changed.stdout.trim(), changed.stderr]).toEqual([
      0,
      `Run ${id} updated: resources gpu=1 mem=8G cpu=2 -> gpu=1 mem=2G cpu=1; labels team=a -> team=b draft=1`,
      `Warning: run ${id} updated, but no live worker can run it yet: no live worker`,
    ]);
    expect(await client.getRun(id)).toMatchObject({ resources: { cpu: 1, gpu: 1, mem: 2e9 }, requires: 'gpu=1 mem=2G cpu=1' });
    // A new demand joins the others; =0 removes one; a run id after -r is no demand.
    expect((await fitq(['update', id, '-r', 'lic=1,mem=0'], { queue })).stdout.trim()).toBe(`Run ${id} updated: resources gpu=1 mem=2G cpu=1 -> gpu=1 cpu=1 lic=1`);
    expect(await client.getRun(id)).toMatchObject({ resources: { cpu: 1, gpu: 1, lic: 1 }, requires: 'gpu=1 cpu=1 lic=1' });
    for (const [args, message] of [
      [['-r', 'gpu=2', id], `'${id}' is no demand (NAME=VALUE): -r takes every word up to the next flag, so name the runs before it (fitq update ${id} -r gpu=2)`],
      [['--label', 'a=1', id], `'${id}' is no label (KEY=VALUE): --label takes every word up to the next flag, so name the runs before it (fitq update ${id} --label a=1)`],
      [[id, '-r', ''], "-r '' names no demand: name the demands to change (-r mem=16G), and remove one with NAME=0 (-r mem=0)"],
    ] as const) {
      expect(await fitq(['update', ...args], { queue })).toEqual({ exitCode: 2, stdout: '', stderr: `Error: ${message}` });
    }
    expect(await client.getRun(id)).toMatchObject({ requires: 'gpu=1 cpu=1 lic=1', labels: { team: 'b', draft: '1' } });
  });

  it('warns, as fitq stage does, when no live worker could run the updated run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'gpu=1', '--name', 'small']);
    await waitFor('the worker to register', async () => (await client.listWorkers()).some((live) => live.name === 'small'), 30_000);
    const [one, two] = (await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 2 })).runs.map((run) => run.id) as [string, string];
    const grown = await fitq(['update', one, two, '-r', 'nowhere=0', 'gpu=2'], { queue });
    expect(grown.exitCode, grown.stderr).toBe(0);
    expect(grown.stderr.trim()).toBe(`Warning: 2 runs (${one}, ...) updated, but no live worker can run them yet: needs more than any live worker has: gpu=2 > 1`);
    const fits = await fitq(['update', one, '-r', 'gpu=1'], { queue });
    expect([fits.exitCode, fits.stderr]).toEqual([0, '']);
    await worker.waitForMessage(`Run ${one} completed`);
    expect((await client.getRun(two)).status).toBe('staged');
  });

  it('a signed run is refused without the secret, signed anew with it, and run by a worker that requires signed runs', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-update-signed-'));
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, `update-secret-${randomBytes(8).toString('hex')}\n`, { mode: 0o600 });
    const otherFile = join(dir, 'other');
    writeFileSync(otherFile, 'another-secret\n', { mode: 0o600 });
    const id = await stage(queue, ['--secret-file', secretFile, '-r', 'cpu=2', '--', 'true']);
    const signature = (await readRunData(client, id)).signature;

    const unsigned = await fitq(['update', id, '-r', 'cpu=1'], { queue });
    expect([unsigned.exitCode, unsigned.stderr.trim()]).toEqual([
      2,
      `Error: run '${id}' is signed: give the secret to re-sign it (--secret-file, FITQ_SECRET_FILE or FITQ_SECRET)`,
    ]);
    const other = await fitq(['update', id, '-r', 'cpu=1', '--secret-file', otherFile], { queue });
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(`run '${id}' is signed, but not with this secret (or it was altered): it is not re-signed`);
    expect(await readRunData(client, id)).toMatchObject({ resources: 'cpu=2', signature });
    // Labels are not signed: no secret needed, the signature stays.
    expect((await fitq(['update', id, '--label', 'team=a'], { queue })).exitCode).toBe(0);
    expect(await readRunData(client, id)).toMatchObject({ labels: { team: 'a' }, signature });

    const signed = await fitq(['update', id, '-r', 'cpu=1', '--priority', '2'], { queue, env: { FITQ_SECRET_FILE: secretFile } });
    expect(signed.exitCode, signed.stderr).toBe(0);
    const data = await readRunData(client, id);
    expect(data).toMatchObject({ resources: 'cpu=1', priority: 2 });
    expect(data.signature).toMatch(/^v1:[0-9a-f]{64}$/);
    expect(data.signature).not.toBe(signature);

    const worker = await fitq(['worker', '-r', 'cpu=1', '--secret-file', secretFile, '--run-once', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);
    expect(await client.getRun(id)).toMatchObject({ status: 'completed', exitCode: 0 });
  });

  it('many edits racing a worker claim: every run starts with the demands it was claimed with', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const DEMANDS = ['cpu=1', 'cpu=2', 'cpu=1 mem=1', 'mem=1'];
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const staged = await client.stage({ command: ['echo $FITQ_RESOURCES'], shell: true, resources: DEMANDS[i % DEMANDS.length], repeat: 10 });
      ids.push(...staged.runs.map((run) => run.id));
    }
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', 'mem=1', '--concurrency', '2', '--name', 'racer']);
    let round = 0;
    let edits = 0;
    for (;;) {
      const statuses = await Promise.all(ids.map(async (id) => [id, await client.redis.hget(client.keys.run(id), 'status')] as const));
      const staged = statuses.filter(([, status]) => status === 'staged').map(([id]) => id);
      if (staged.length === 0) break;
      round += 1;
      try {
        const results = await client.updateRuns(staged, { resources: DEMANDS[round % DEMANDS.length], priority: round % 3 });
        edits += results.filter((result) => result.outcome === 'updated').length;
      } catch (error) {
        // One claimed between reading the statuses and the check: every run is checked first.
        if (!(error instanceof UsageError)) throw error;
      }
    }
    for (const id of ids) expect(await client.waitForEnd(id), id).toMatchObject({ status: 'completed' });
    expect(edits).toBeGreaterThan(0);
    for (const id of ids) {
      const hash = await client.redis.hgetall(client.keys.run(id));
      const demands = parseStoredResources(JSON.parse(hash.data!).resources as string);
      // What the claim reserved is what the run demands, and what it was told it has.
      expect(parseStoredResources(hash.reserved), id).toEqual(demands);
      const told = (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
      expect(told.map((line) => JSON.parse(line) as unknown), id).toEqual([resourcesToJson(demands)]);
    }
    // (The worker's log lines may reach the test after Redis records the ends.)
    const startedLines = () => worker.messages().filter((message) => message.startsWith('Run ') && message.endsWith(' started'));
    await waitFor('every start in the log', () => startedLines().length >= ids.length);
    expect(startedLines()).toHaveLength(ids.length);
  });
});
