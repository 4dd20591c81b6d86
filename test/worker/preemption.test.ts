/**
 * Preemption (fitq stage --preemptible) through real CLI workers: a run of a
 * higher priority that cannot start otherwise makes its worker signal a
 * preemptible run, wait its grace and stop it; the run goes back to staged at
 * its place, no retry spent, its attempt recorded as preempted, and resumes
 * with FITQ_PREEMPTED=1 and its attempt number. Never for a run of the same
 * priority, one not preemptible, one before its --preempt-after, nor when
 * another worker could start the run; the fewest runs, then the most recent.
 * With `fitq share set --preempt`, a user within their share preempts runs
 * of a user over theirs.
 * No capacity is held twice or leaked.
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker, type CliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, fitqOk, newQueue, stageAsUser } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/**
 * A run that checkpoints: it notes each start (its attempt and whether it
 * was preempted) and each checkpoint signal in files named after its id;
 * on SIGUSR1 it checkpoints and exits; started again after a preemption it
 * resumes and completes at once. Else it runs until stopped.
 */
function checkpointing(): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-preempt-'));
  const script = join(dir, 'run.sh');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `echo "attempt=$FITQ_ATTEMPT preempted=\${FITQ_PREEMPTED:-0}" >> "${dir}/$FITQ_RUN_ID.starts"`,
      `trap 'echo checkpoint >> "${dir}/$FITQ_RUN_ID.signals"; exit 0' USR1`,
      'if [ -n "$FITQ_PREEMPTED" ]; then exit 0; fi',
      'while :; do sleep 0.1; done',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { dir, script };
}

const read = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '');

async function stageOne(queue: string, args: string[]): Promise<string> {
  return (await fitqOk(queue, ['stage', ...args])).trim();
}

async function running(client: FitqClient, runId: string): Promise<RunRecord> {
  return waitFor(`run ${runId} running`, async () => {
    const run = await client.getRun(runId);
    return run.status === 'running' ? run : undefined;
  });
}

/** Once a worker holds `runId` (its claim took the hold), what that claim decided is in Redis. */
async function held(client: FitqClient, runId: string): Promise<void> {
  await waitFor(`a worker holding ${runId}`, async () => (await client.redis.hget(client.keys.holds, runId)) !== null);
}

/** Nothing held after: the (one) worker's capacity of `resource` is whole again. */
async function expectWhole(client: FitqClient, resource: string): Promise<void> {
  const [record] = await client.listWorkers();
  expect(record!.free.get(resource)).toBe(record!.capacity.get(resource));
}

/** What says a run was never preempted. */
const notPreempted = (run: RunRecord) => ({ status: run.status, preempted: run.preempted, attempts: run.attempts ?? [] });

async function stop(worker: CliWorker): Promise<void> {
  worker.process.kill('SIGTERM');
  await worker.exited;
}

describe('preemption', () => {
  it('signals a preemptible run, re-stages it at its place without spending a retry, and it resumes with FITQ_PREEMPTED=1', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { dir, script } = checkpointing();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w1']);
    const low = await stageOne(queue, ['-r', 'cpu=2', '--retries', '1', '--preempt-signal', 'USR1@2m', '--', script]);
    await running(client, low);
    await waitFor('its first start', () => read(join(dir, `${low}.starts`)) !== '');
    const high = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'sh', '-c', `echo "$FITQ_ATTEMPT" > ${dir}/high`]);

    expect(await client.waitForEnd(high)).toMatchObject({ status: 'completed' });
    await client.waitForEnd(low);
    const ended = await client.getRun(low);
    expect(ended).toMatchObject({ status: 'completed', preempted: 1 });
    expect(ended.restaged).toBeUndefined();
    expect(ended.attempts).toHaveLength(1);
    expect(ended.attempts![0]).toMatchObject({ attempt: 1, status: 'preempted', reason: `preempted for run ${high}`, worker: 'w1' });
    // Its checkpoint signal, once; its second start knew it was preempted.
    expect(read(join(dir, `${low}.signals`))).toBe('checkpoint\n');
    expect(read(join(dir, `${low}.starts`))).toBe('attempt=1 preempted=0\nattempt=2 preempted=1\n');
    expect(read(join(dir, 'high'))).toBe('1\n');
    // The urgent run started only once the preempted one had ended: cpu=2 was never exceeded.
    const urgent = await client.getRun(high);
    expect(urgent.startedAt!).toBeGreaterThanOrEqual(ended.attempts![0]!.endedAt!);
    expect((await fitqOk(queue, ['runs', 'show', low]))).toMatch(/preempted: +1 time\n/);
    // Nothing held after: the worker's capacity is whole again.
    await expectWhole(client, 'cpu');
    await stop(worker);
    await client.close();
  });

  it('gives a run that ignores its signal its grace, then stops it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preempt-signal', 'USR1@1s', '--', 'sh', '-c', "trap '' USR1; while :; do sleep 0.2; done"]);
    // (Preempted before its process runs, a run is stopped at once: it has nothing to save.)
    await worker.waitForMessage(`Run ${low} started`);
    const high = await stageOne(queue, ['-r', 'cpu=1', '--priority', '1', '--', 'true']);
    expect(await client.waitForEnd(high)).toMatchObject({ status: 'completed' });
    const staged = await client.getRun(low);
    expect(staged.attempts?.map((attempt) => attempt.status)).toEqual(['preempted']);
    const times = (message: RegExp) => worker.logs().filter((line) => message.test(String(line.msg))).map((line) => Number(line.time));
    const [signalled] = times(new RegExp(`^Run ${low} preempted for run ${high}: sent SIGUSR1, stopping it in 1s$`));
    const [stopped] = times(new RegExp(`^Run ${low} terminated .* as preempted for run ${high}: re-staged$`));
    expect(stopped! - signalled!).toBeGreaterThanOrEqual(1000);
    await client.cancelRun(low, { wait: true });
    await stop(worker);
    await client.close();
  });

  it('lets a preempted run go on when the run it made room for no longer waits at the end of its grace', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { dir } = checkpointing();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const saved = join(dir, 'saved');
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preempt-signal', 'USR1@5s', '--', 'sh', '-c', `trap 'echo saved >> ${saved}' USR1; while :; do sleep 0.1; done`]);
    await worker.waitForMessage(`Run ${low} started`);
    const head = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'true']);
    await waitFor('the preemption', async () => (await client.getRun(low)).preempting?.for === head);
    expect(await fitqOk(queue, ['runs', '--columns', 'id,why', '--status', 'running'])).toContain(`preempting ${low} for ${head} (SIGUSR1, grace 5s)`);
    expect(await fitqOk(queue, ['runs', 'show', low])).toMatch(/preemptible: +SIGUSR1, grace 5s\n/);
    await client.cancelRun(head);
    await worker.waitForMessage(`Run ${low} runs on: run ${head} no longer waits for it (its preemption was dropped)`);
    const run = await client.getRun(low);
    expect({ status: run.status, preempting: run.preempting, attempts: run.attempts ?? [] }).toEqual({ status: 'running', preempting: undefined, attempts: [] });
    expect(read(saved)).toBe('saved\n');
    await client.cancelRun(low, { wait: true });
    await stop(worker);
  });

  it('puts a run whose worker dies during its grace back as staged, as preempted: no retry spent, nothing leaked', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const first = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1', '--lease', '2']);
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preempt-signal', 'USR1@1m', '--', 'sh', '-c', "trap '' USR1; while :; do sleep 0.2; done"]);
    await first.waitForMessage(`Run ${low} started`);
    const head = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'true']);
    await waitFor('the preemption', async () => (await client.getRun(low)).preempting?.for === head);
    first.process.kill('SIGKILL');
    await first.exited;
    // Another worker starts the head, reaps the dead one once its lease lapses, then starts the preempted run again.
    const second = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w2', '--lease', '2']);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed', worker: 'w2' });
    const again = await waitFor(`run ${low} running on w2`, async () => {
      const run = await client.getRun(low);
      return run.status === 'running' && run.worker === 'w2' ? run : undefined;
    });
    expect(again.restaged).toBeUndefined();
    expect(again.attempts?.map((attempt) => [attempt.status, attempt.worker])).toEqual([['preempted', 'w1']]);
    expect(again.attempts![0]!.reason).toMatch(new RegExp(`, as it was being preempted for run ${head}$`));
    await client.cancelRun(low, { wait: true });
    await expectWhole(client, 'cpu');
    await stop(second);
  });

  it('frees GPU devices: when the devices it frees, not only their count, let the run start, which gets the freed device', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['--gpus', '0,1', '--name', 'w1']);
    const forever = ['sh', '-c', 'echo "dev=$CUDA_VISIBLE_DEVICES"; while :; do sleep 0.2; done'];
    // Half of each device in use: a whole gpu=1 fits the count free (1) but no device.
    const low = await stageOne(queue, ['-r', 'gpu=0.5', '--preemptible', '--', ...forever]);
    expect((await running(client, low)).devices).toEqual([0]);
    const other = await stageOne(queue, ['-r', 'gpu=0.5', '--gpus', '1', '--', ...forever]);
    expect((await running(client, other)).devices).toEqual([1]);
    // Both devices whole: preempting the one preemptible run would free one device only.
    const both = await stageOne(queue, ['-r', 'gpu=2', '--priority', '5', '--', 'true']);
    await held(client, both);
    expect((await client.getRun(low)).preempting).toBeUndefined();
    await client.cancelRun(both);
    const head = await stageOne(queue, ['-r', 'gpu=1', '--priority', '5', '--', 'sh', '-c', 'echo "dev=$CUDA_VISIBLE_DEVICES"']);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed', devices: [0] });
    expect((await client.readLog(head)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toContain('dev=0');
    expect((await client.getRun(low)).attempts?.map((attempt) => attempt.status)).toEqual(['preempted']);
    expect((await client.getRun(other)).preempted).toBeUndefined();
    await client.cancelRuns([low, other], { wait: true });
    await expectWhole(client, 'gpu');
    await stop(worker);
  });

  it('never preempts a run of the same priority, one not preemptible, or one before its --preempt-after', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const cases: [string[], string[]][] = [
      [['--preemptible'], ['--priority', '0']],
      [[], ['--priority', '5']],
      [['--preemptible', '--preempt-after', '1h'], ['--priority', '5']],
    ];
    for (const [lowFlags, headFlags] of cases) {
      const low = await stageOne(queue, ['-r', 'cpu=1', ...lowFlags, '--', 'sleep', '600']);
      await running(client, low);
      const head = await stageOne(queue, ['-r', 'cpu=1', ...headFlags, '--', 'true']);
      await held(client, head);
      const run = await client.getRun(low);
      expect({ lowFlags, headFlags, status: run.status, preempting: run.preempting }).toEqual({ lowFlags, headFlags, status: 'running', preempting: undefined });
      await client.cancelRuns([head, low], { wait: true });
    }
    // And the same worker does preempt one that may be: the hold above was where it would have.
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preempt-after', '2s', '--', 'sleep', '600']);
    const started = (await running(client, low)).startedAt!;
    const head = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'true']);
    await held(client, head);
    // Not before it ran 2s (the claim that held the head may have come later than that), then without any other event.
    const early = await client.getRun(low);
    if (early.preempting) expect(early.preempting.since - started).toBeGreaterThanOrEqual(2000);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed' });
    const preempted = await client.getRun(low);
    expect(preempted.attempts?.[0]).toMatchObject({ status: 'preempted' });
    expect(preempted.attempts![0]!.endedAt! - started).toBeGreaterThanOrEqual(2000);
    await client.cancelRun(low, { wait: true });
    await stop(worker);
    await client.close();
  });

  it('preempts the fewest runs, then the most recently started', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { script } = checkpointing();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=4', '--name', 'w1']);
    const preemptible = async (cpu: number): Promise<string> => {
      const id = await stageOne(queue, ['-r', `cpu=${cpu}`, '--preempt-signal', 'USR1@1m', '--', script]);
      await running(client, id);
      return id;
    };
    // cpu=3 for the head: the newer cpu=1 run alone frees too little; the older cpu=3 run alone frees enough.
    const big = await preemptible(3);
    const small = await preemptible(1);
    const head = await stageOne(queue, ['-r', 'cpu=3', '--priority', '5', '--', 'true']);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed' });
    expect(await client.waitForEnd(big)).toMatchObject({ status: 'completed', preempted: 1 });
    expect(notPreempted(await client.getRun(small))).toEqual({ status: 'running', preempted: undefined, attempts: [] });
    // Two runs of which either frees enough: the newer goes.
    await client.cancelRun(small, { wait: true });
    const older = await preemptible(2);
    const newer = await preemptible(2);
    const second = await stageOne(queue, ['-r', 'cpu=2', '--priority', '5', '--', 'true']);
    expect(await client.waitForEnd(second)).toMatchObject({ status: 'completed' });
    expect(await client.waitForEnd(newer)).toMatchObject({ status: 'completed', preempted: 1 });
    expect(notPreempted(await client.getRun(older))).toEqual({ status: 'running', preempted: undefined, attempts: [] });
    await client.cancelRun(older, { wait: true });
    await expectWhole(client, 'cpu');
    await stop(worker);
    await client.close();
  });

  it('does not preempt when another worker can start the run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const first = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preemptible', '--', 'sleep', '600']);
    await running(client, low);
    const second = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w2']);
    await client.waitForWorkers((workers) => workers.length === 2, 30_000);
    const head = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'true']);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed', worker: 'w2' });
    const run = await client.getRun(low);
    expect({ ...notPreempted(run), preempting: run.preempting }).toEqual({ status: 'running', preempted: undefined, attempts: [], preempting: undefined });
    await client.cancelRun(low, { wait: true });
    await Promise.all([stop(first), stop(second)]);
    await client.close();
  });

  it("with fitq share set --preempt, a user within their share preempts a run of a user over theirs, of the same priority; never the other way", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const [bobs] = await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--', 'sleep', '600']);
    await worker.waitForMessage(`Run ${bobs} started`);
    // Off (the default): alice's run waits behind bob's, which is not --preemptible.
    const [alices] = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'true']);
    await held(client, alices!);
    expect((await client.getRun(bobs!)).preempting).toBeUndefined();
    expect(await fitqOk(queue, ['share', 'set', '--preempt'])).toMatch(/^fair share on; preempts runs of users over their share; /);
    expect(await client.waitForEnd(alices!)).toMatchObject({ status: 'completed', user: 'alice' });
    const bob = await running(client, bobs!);
    expect(bob.attempts?.map((attempt) => [attempt.status, attempt.reason])).toEqual([['preempted', `preempted for run ${alices}`]]);
    // Alice, within her share, takes the worker back for a long run; bob, over his, never preempts it.
    const [long] = await stageAsUser(queue, 'alice', ['-r', 'cpu=1', '--', 'sleep', '600']);
    await running(client, long!);
    const [again] = await stageAsUser(queue, 'bob', ['-r', 'cpu=1', '--', 'true']);
    await held(client, again!);
    expect((await client.getRun(long!)).preempting).toBeUndefined();
    expect((await client.getRun(bobs!)).preempted).toBe(2);
    await client.cancelRuns([again!, bobs!, long!], { wait: true });
    await expectWhole(client, 'cpu');
    await stop(worker);
  });

  it('preempts when the other worker with room free runs as many runs as its --concurrency lets it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const first = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1']);
    const low = await stageOne(queue, ['-r', 'cpu=1', '--preemptible', '--', 'sleep', '600']);
    await running(client, low);
    const second = spawnCliWorker(queue, ['-r', 'cpu=2', '--concurrency', '1', '--name', 'w2']);
    await client.waitForWorkers((workers) => workers.length === 2, 30_000);
    const busy = await stageOne(queue, ['-r', 'cpu=1', '--', 'sleep', '600']);
    expect((await running(client, busy)).worker).toBe('w2');
    // w2 has cpu=1 free but claims nothing more: only preempting on w1 starts the head.
    const head = await stageOne(queue, ['-r', 'cpu=1', '--priority', '5', '--', 'true']);
    expect(await client.waitForEnd(head)).toMatchObject({ status: 'completed', worker: 'w1' });
    expect((await client.getRun(low)).attempts?.map((attempt) => attempt.status)).toEqual(['preempted']);
    await client.cancelRuns([low, busy], { wait: true });
    await Promise.all([stop(first), stop(second)]);
  });

  it('refuses preemption terms that are wrong with one line, exit 2', async () => {
    const queue = newQueue();
    const refusals: [string[], string][] = [
      [['--preempt-signal', 'FOO'], "Error: expected --preempt-signal to be SIGNAL[@TIME] such as SIGUSR1@120s or TERM (a signal: TERM, INT, HUP, QUIT, USR1, USR2, ALRM, XCPU, CONT, WINCH, URG), got 'FOO'"],
      [['--preempt-signal', 'USR1@soon'], "Error: expected --preempt-signal to be SIGNAL[@TIME] such as SIGUSR1@120s or TERM (the time before it is stopped: 120s, 2m, 00:02:00 or 120), got 'USR1@soon'"],
      [['--preempt-signal', 'USR1@3h'], "Error: --preempt-signal 'SIGUSR1@3h' gives a grace above 2h: the run it makes room for waits that long"],
      [['--preempt-after', '7'], "Error: expected --preempt-after to be a duration such as 7d, 12h, 30m or 1h30m (a number needs a unit: ms, s, m, h, d or w), got '7'"],
    ];
    for (const [flags, message] of refusals) {
      const result = await fitq(['stage', ...flags, '--', 'true'], { queue });
      expect({ flags, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ flags, exitCode: 2, stderr: message });
    }
    const client = await connectClient(queue);
    expect(await client.listRuns({})).toEqual([]);
    await client.close();
  });
});
