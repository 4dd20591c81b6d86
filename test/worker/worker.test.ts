import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import type { FitqWorker } from '../../src/worker/worker.js';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, messages, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

async function outputOf(client: FitqClient, id: string): Promise<string[]> {
  return (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
}

async function waitEnded(client: FitqClient, ids: string[]) {
  return Promise.all(ids.map((id) => client.waitForEnd(id)));
}

describe('worker', () => {
  it('wakes on staging, not by polling: an idle worker starts a new run at once', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { pollIntervalMs: 600_000 });
    // Let the worker go idle first: its first claim found nothing.
    const { runs } = await client.stage({ command: ['true'] });
    const [run] = await waitEnded(client, [runs[0]!.id]);
    // The safety-net poll is 10 minutes away, so only the event can have started it.
    expect(run).toMatchObject({ status: 'completed' });
  });

  it("gives a run the worker's environment plus its own, and the FITQ_* variables; never the stager's", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    process.env.FITQ_TEST_WORKER_VAR = 'from-worker';
    const { runs } = await client.stage({
      command: ['sh', '-c', 'echo "$FITQ_TEST_WORKER_VAR|$EXTRA|$FITQ_RUN_ID|$FITQ_WORKER|$FITQ_RESOURCES"'],
      env: { EXTRA: 'from-run' },
      resources: 'foo=1.5 mem=2K',
    });
    const { worker } = await startTestWorker(queue, { name: 'env-w', resources: 'foo=2 mem=1M', runOnce: true });
    await worker.done;
    delete process.env.FITQ_TEST_WORKER_VAR;
    expect(await outputOf(client, runs[0]!.id)).toEqual([`from-worker|from-run|${runs[0]!.id}|env-w|{"foo":1.5,"mem":2000}`]);
  });

  it('runs the argv with no shell unless asked for one', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const plain = await client.stage({ command: ['echo', '$HOME', '&&', 'ls'] });
    const shell = await client.stage({ command: ['echo', 'sh:$0'], shell: true });
    await startTestWorker(queue, { runOnce: true });
    await waitEnded(client, [plain.runs[0]!.id, shell.runs[0]!.id]);
    expect(await outputOf(client, plain.runs[0]!.id)).toEqual(['$HOME && ls']);
    expect(await outputOf(client, shell.runs[0]!.id)).toEqual(['sh:sh']);
  });

  it('records failures with their reason and carries on', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const stage = async (command: string[], shell = false) => (await client.stage({ command, shell })).runs[0]!.id;
    const missing = await stage(['no-such-command-fitq']);
    const script = join(mkdtempSync(join(tmpdir(), 'fitq-')), 'not-executable.sh');
    writeFileSync(script, 'echo hi\n', { mode: 0o644 });
    const notExecutable = await stage([script]);
    const crash = await stage(['sh', '-c', 'exit 3']);
    const killed = await stage(['sh', '-c', 'kill -9 $$']);
    const gone = mkdtempSync(join(tmpdir(), 'fitq-gone-'));
    const missingCwd = (await client.stage({ command: ['true'], cwd: gone })).runs[0]!.id;
    rmSync(gone, { recursive: true });
    const fine = await stage(['true']);
    const { worker, logs } = await startTestWorker(queue, { runOnce: true, concurrency: 1 });
    await worker.done;
    expect(await client.getRun(missing)).toMatchObject({ status: 'failed', reason: 'command not found: no-such-command-fitq' });
    expect(await client.getRun(notExecutable)).toMatchObject({ status: 'failed', reason: `permission denied: ${script}` });
    expect(await client.getRun(crash)).toMatchObject({ status: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(await client.getRun(killed)).toMatchObject({ status: 'failed', signal: 'SIGKILL', reason: 'killed by signal SIGKILL' });
    expect(await client.getRun(missingCwd)).toMatchObject({ status: 'failed', reason: `working directory not found: ${gone}` });
    expect(await client.getRun(fine)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(messages(logs)).toEqual(
      expect.arrayContaining([
        `Run ${missing} failed (command not found: no-such-command-fitq)`,
        `Run ${crash} failed (exit code 3)`,
        `Run ${killed} failed (signal SIGKILL)`,
        `Run ${fine} completed`,
      ]),
    );
  });

  it('claims higher priority first, then older, and backfills past runs that do not fit', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = async (priority: number, resources: string) =>
      (await client.stage({ command: ['true'], priority, resources })).runs[0]!.id;
    const low = await id(0, 'slot=1');
    const big = await id(5, 'slot=1 big=9');
    const high = await id(5, 'slot=1');
    const higher = await id(9, 'slot=1');
    const { worker, logs } = await startTestWorker(queue, { resources: 'slot=1 big=1', runOnce: true });
    await worker.done;
    const order = messages(logs).filter((m) => m.startsWith('Scheduling')).map((m) => m.split(' ')[2]);
    expect(order).toEqual([higher, high, low]);
    expect((await client.getRun(big)).status).toBe('staged');
  });

  it('keeps capacity exact over many fractional claims and releases', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], resources: 'x=0.1', repeat: 60 });
    const { worker } = await startTestWorker(queue, { name: 'frac', resources: 'x=0.3', runOnce: true });
    await worker.done;
    expect((await client.listRuns({ statuses: ['completed'] })).length).toBe(60);
    const { runs } = await client.stage({ command: ['sleep', '30'], resources: 'x=0.1', repeat: 4 });
    await startTestWorker(queue, { name: 'frac2', resources: 'x=0.3' });
    await expect.poll(async () => (await client.listRuns({ statuses: ['running'] })).length, { timeout: 10_000 }).toBe(3);
    const [live] = await client.listWorkers();
    expect([...live!.free]).toEqual([['x', 0n]]);
    for (const run of runs) await client.cancelRun(run.id).catch(() => {});
  });

  it('keeps the last lines of huge output, bounded', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['sh', '-c', 'seq 1 25000'], shell: false });
    await startTestWorker(queue, { runOnce: true });
    await waitEnded(client, [runs[0]!.id]);
    const lines = await outputOf(client, runs[0]!.id);
    expect(lines.length).toBeGreaterThanOrEqual(10_000);
    expect(lines.length).toBeLessThan(25_000);
    expect(lines[lines.length - 1]).toBe('25000');
  });
});

describe('worker lifecycle', () => {
  it('never loses a run it claimed while being stopped', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const { runs } = await client.stage({ command: ['true'] });
      ids.push(runs[0]!.id);
      const { worker } = await startTestWorker(queue, { name: `stopper${attempt}` });
      await worker.stop();
    }
    for (const id of ids) expect(['staged', 'completed']).toContain((await client.getRun(id)).status);
  });

  it('never starts a run whose claim was still on its way when it was stopped with now: recorded as not started, nothing left running', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-worker-'));
    try {
      const name = `racing-${queue}`;
      const racing: { worker?: FitqWorker } = {};
      let stopped: Promise<void> | undefined;
      // Stopped right as its claim returns, before the run reaches the executor.
      const started = await startTestWorker(queue, { name, resources: 'foo=1', killGraceMs: 500 }, (entry) => {
        if (String(entry.msg).startsWith('Scheduling run ')) stopped ??= racing.worker!.stop({ now: true, why: 'test' });
      });
      racing.worker = started.worker;
      const marker = join(dir, 'ran');
      const runId = (await client.stage({ command: ['sh', '-c', `touch '${marker}'; sleep 60`], resources: 'foo=1' })).runs[0]!.id;
      await waitFor('the worker to claim the run', () => stopped !== undefined);
      await stopped;

      const why = `its worker ${name} was stopped (test)`;
      expect(await client.getRun(runId)).toMatchObject({ status: 'lost', reason: why, worker: name });
      const said = messages(started.logs);
      expect(said).toContain(`Run ${runId} not started as ${why}: lost`);
      expect(said).not.toContain(`Run ${runId} started`);
      expect(said.join('\n')).not.toMatch(/Could not record/);
      expect(existsSync(marker)).toBe(false);
      expect(await client.listWorkers()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stopped with now once it has stopped, starts no timer that would keep the process alive', async () => {
    const queue = newQueue();
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    const stopped = worker.stop({ now: true, why: 'test' });
    expect(timers()).toBe(before);
    await stopped;
  });

  it('judges leases by the Redis clock, not by the clock of whoever reaps', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'steady', leaseMs: 2000 });
    const realNow = Date.now;
    Date.now = () => realNow() + 3_600_000; // this host's clock runs an hour ahead
    try {
      expect((await client.listWorkers()).map((worker) => worker.name)).toEqual(['steady']);
    } finally {
      Date.now = realNow;
    }
  });

  it('refuses resource maps that break the spec rules, staging nothing', async () => {
    const client = await connectClient(newQueue());
    await expect(client.stage({ command: ['true'], resources: new Map([['a b', 1n]]) })).rejects.toThrow("invalid resource spec 'a b=1'");
    await expect(client.stage({ command: ['true'], resources: new Map([['neg', -5n]]) })).rejects.toThrow("invalid resource spec 'neg=-5'");
    expect(await client.listRuns()).toEqual([]);
  });
});

describe('a claim whose reply never reached its worker', () => {
  it('is given back at the next heartbeat: re-staged per its retries, else lost; its reservation returned', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    // The worker is full (one run at a time), so it claims nothing more itself.
    const { logs } = await startTestWorker(queue, { name: 'deaf', resources: 'slot=3', concurrency: 1, leaseMs: 3000 });
    const busy = (await client.stage({ command: ['sleep', '30'], resources: 'slot=1' })).runs[0]!.id;
    await waitFor('the first run to start', async () => (await client.getRun(busy)).status === 'running');
    const [retried, lost] = (await client.stage([
      { command: ['true'], resources: 'slot=1', retries: 1 },
      { command: ['true'], resources: 'slot=1' },
    ])).runs.map((run) => run.id);

    // Claims made for the worker as its own would be, whose replies it never sees.
    const token = String(await client.redis.hget(client.keys.worker('deaf').info, 'token'));
    for (const id of [retried, lost]) {
      expect(await scripts.claimRun('deaf', token, 0)).toMatchObject({ code: 'claimed', runId: id });
    }
    expect((await client.listWorkers())[0]!.free).toEqual(new Map([['slot', 0n]]));

    const reason = "its worker never received the claim's reply (Redis connection lost)";
    expect(await client.waitForEnd(lost!)).toMatchObject({ status: 'lost', reason });
    await waitFor('the other to be re-staged', async () => (await client.getRun(retried!)).restaged === 1);
    expect((await client.getRun(retried!)).restagedReason).toBe(`${reason} (re-staged 1 of 1)`);
    expect((await client.listWorkers())[0]!.free).toEqual(new Map([['slot', 2_000_000n]]));
    expect(messages(logs)).toContain(`Run ${lost} was claimed for this worker but the claim's reply never arrived (Redis connection lost); giving it back`);
    // The run it does run is left alone.
    expect(await client.getRun(busy)).toMatchObject({ status: 'running', worker: 'deaf' });
  });
});

describe('worker log lines', () => {
  it('carry fields, not only text: runId, worker, status, exitCode, durationMs', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [ok, bad] = (await client.stage([{ command: ['true'], resources: 'slot=1' }, { command: ['sh', '-c', 'exit 3'], resources: 'slot=1' }])).runs.map((run) => run.id);
    const { worker, logs } = await startTestWorker(queue, { name: 'fields-w', resources: 'slot=1', runOnce: true });
    await worker.done;
    const entry = (msg: string) => logs.find((line) => line.msg === msg);
    expect(entry(`Scheduling run ${ok} (requires slot=1)`)).toMatchObject({ worker: 'fields-w', runId: ok, epoch: 1, requires: 'slot=1' });
    expect(entry(`Run ${ok} started`)).toMatchObject({ worker: 'fields-w', runId: ok, pid: expect.any(Number) });
    expect(entry(`Run ${ok} completed`)).toMatchObject({ worker: 'fields-w', runId: ok, status: 'completed', exitCode: 0, durationMs: expect.any(Number) });
    expect(entry(`Run ${bad} failed (exit code 3)`)).toMatchObject({ runId: bad, status: 'failed', exitCode: 3, durationMs: expect.any(Number) });
  });
});
