/**
 * `fitq logs`: a note on stderr when a run has no output because it waits or
 * never started, and where lines were not stored, saying exactly how many
 * and why; `fitq logs -f` says how the run ended and exits with its exit
 * code. (A run lost under `logs -f`: test/worker/liveness.test.ts; lines
 * dropped while Redis was slow: test/worker/output-bounds.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, fitqMerged, newQueue, startTestWorker } from '../support/fitq.js';

describe('fitq logs on a run without output', () => {
  it('says a staged run has no output yet, and exits 0', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    const result = await fitq(['logs', id], { queue });
    expect(result).toEqual({ exitCode: 0, stdout: '', stderr: `run ${id} is staged: no output yet (fitq runs shows why it waits)` });
  });

  it('says why a run ended before starting (canceled while staged, command not found, rejected)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const canceled = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    await client.cancelRun(canceled);
    const missing = (await client.stage({ command: ['fitq-no-such-command'] })).runs[0]!.id;
    const { worker } = await startTestWorker(queue, { name: 'plain', runOnce: true });
    await worker.done;
    const unsigned = (await client.stage({ command: ['true'] })).runs[0]!.id;
    const strict = await startTestWorker(queue, { name: 'strict', runOnce: true, secret: 'a shared secret' });
    await strict.worker.done;
    expect(await client.getRun(unsigned)).toMatchObject({ status: 'rejected' });

    const [a, b, c] = await Promise.all([canceled, missing, unsigned].map((id) => fitq(['logs', id], { queue })));
    expect(a).toEqual({ exitCode: 0, stdout: '', stderr: `run ${canceled} ended canceled before starting: canceled while staged` });
    expect(b).toEqual({ exitCode: 0, stdout: '', stderr: `run ${missing} ended failed before starting: command not found: fitq-no-such-command` });
    expect(c).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `run ${unsigned} ended rejected before starting: run is not signed (this worker requires signed runs)`,
    });
  });

  it('prints nothing more for a run that ran and printed nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'] })).runs[0]!.id;
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    expect(await fitq(['logs', id], { queue })).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });
});

describe('fitq logs on an ended run', () => {
  it("prints a short log, packed as the run ended, stdout and stderr each to its own", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['sh', '-c', 'echo out; echo err >&2; echo more'] })).runs[0]!.id;
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    expect(await client.redis.exists(client.keys.runPackedLog(id))).toBe(1);
    expect(await fitq(['logs', id], { queue })).toEqual({ exitCode: 0, stdout: 'out\nmore', stderr: 'err' });
    expect(await fitq(['logs', '-f', id], { queue })).toEqual({ exitCode: 0, stdout: 'out\nmore', stderr: `err\nrun ${id} completed` });
  });

  it('says in one line, exit 1, when a packed log is not in fitq\'s format', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'] })).runs[0]!.id;
    await client.cancelRun(id);
    await client.redis.set(client.keys.runPackedLog(id), '[["1-0",["stream","stdout","line",7]]]');
    expect(await fitq(['logs', id], { queue })).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `Error: the packed output of run '${id}' is not in fitq's format (${client.keys.runPackedLog(id)})`,
    });
  });
});

describe('fitq logs -f', () => {
  it('follows a staged run through its start to its end, then says it completed and exits 0', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['sh', '-c', 'echo out; echo err >&2'], resources: 'foo=1' })).runs[0]!.id;
    const following = fitq(['logs', '-f', id], { queue });
    // The follower is waiting on a staged run; a worker arriving now starts it.
    await startTestWorker(queue, { resources: 'foo=1' });
    expect(await following).toEqual({ exitCode: 0, stdout: 'out', stderr: `err\nrun ${id} completed` });
  });

  it("exits with the run's exit code, 128 + its signal's number, or 1 when it never started", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const stage = async (command: string[]) => (await client.stage({ command })).runs[0]!.id;
    const three = await stage(['sh', '-c', 'exit 3']);
    const killed = await stage(['sh', '-c', 'kill -KILL $$']);
    const missing = await stage(['fitq-no-such-command']);
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;

    const [a, b, c] = await Promise.all([three, killed, missing].map((id) => fitq(['logs', '-f', id], { queue })));
    expect(a).toEqual({ exitCode: 3, stdout: '', stderr: `run ${three} failed: exit code 3` });
    expect(b).toEqual({ exitCode: 128 + 9, stdout: '', stderr: `run ${killed} failed: killed by signal SIGKILL` });
    expect(c).toEqual({ exitCode: 1, stdout: '', stderr: `run ${missing} failed: command not found: fitq-no-such-command` });
  });

  it('exits 1 for a canceled run and a rejected one, as fitq wait does, saying why', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const canceled = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    const running = (await client.stage({ command: ['sleep', '60'], resources: 'bar=1' })).runs[0]!.id;
    await client.cancelRun(canceled);
    const unsigned = (await client.stage({ command: ['true'] })).runs[0]!.id;
    const strict = await startTestWorker(queue, { name: 'strict', runOnce: true, secret: 'a shared secret' });
    await strict.worker.done;
    // A running run canceled while followed.
    await startTestWorker(queue, { resources: 'bar=1' });
    await expect.poll(async () => (await client.getRun(running)).status, { timeout: 10_000 }).toBe('running');
    const following = fitq(['logs', '-f', running], { queue });
    const [a, b] = await Promise.all([canceled, unsigned].map((id) => fitq(['logs', '-f', id], { queue })));
    await client.cancelRun(running);

    expect(a).toEqual({ exitCode: 1, stdout: '', stderr: `run ${canceled} canceled while staged` });
    expect(b).toEqual({ exitCode: 1, stdout: '', stderr: `run ${unsigned} rejected: run is not signed (this worker requires signed runs)` });
    expect(await following).toEqual({ exitCode: 1, stdout: '', stderr: `run ${running} canceled (killed by signal SIGTERM)` });
  });

  it('refuses an unknown run with one line, exit 2', async () => {
    const queue = newQueue();
    expect(await fitq(['logs', '-f', 'nope'], { queue })).toEqual({ exitCode: 2, stdout: '', stderr: "Error: unknown run 'nope'" });
  });
});

describe('fitq logs on a run that printed more than is stored', () => {
  it('seq 1 50000: one line before the last 10,000 says exactly how many lines were not stored, that the cap did it, and --output', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--', 'seq', '1', '50000'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const worker = await fitq(['worker', '--run-once', '--concurrency', '1', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);

    for (const args of [['logs', id], ['logs', '-f', id]]) {
      const printed = await fitqMerged(args, { queue });
      expect(printed.exitCode, printed.output.slice(0, 500)).toBe(0);
      const [note, ...lines] = printed.output.split('\n');
      if (args.includes('-f')) expect(lines.pop()).toBe(`run ${id} completed`);
      // Every line stored, in order, up to the last: whatever is missing came before them.
      const first = Number(lines[0]);
      expect(lines).toEqual(Array.from({ length: 50_000 - first + 1 }, (_, i) => String(first + i)));
      expect(lines.length).toBeGreaterThanOrEqual(9_999);
      expect(lines.length).toBeLessThanOrEqual(10_000);
      expect(note).toBe(`[fitq: ${first - 1} lines not stored: a run's stored output is capped at its last 10000 lines; use --output FILE to keep all of it]`);
    }
  });

  it('says how the run ended after all of its output, when both go to one pipe that fills (2>&1 read late)', async () => {
    const queue = newQueue();
    // 10,000 lines of 100 characters: a megabyte, far more than a pipe holds.
    const staged = await fitq(['stage', '--', 'seq', '-f', '%0100g', '1', '10000'], { queue });
    const id = staged.stdout.trim();
    expect((await fitq(['worker', '--run-once', '--log-format', 'json'], { queue })).exitCode).toBe(0);
    const printed = await fitqMerged(['logs', '-f', id], { queue, readAfterMs: 1000 });
    expect(printed.exitCode, printed.output.slice(-300)).toBe(0);
    const lines = printed.output.trimEnd().split('\n');
    expect(lines).toHaveLength(10_001);
    expect(lines.at(-2)).toBe('10000'.padStart(100, '0'));
    expect(lines.at(-1)).toBe(`run ${id} completed`);
  });

  it("keeps the order of a run's stdout and stderr lines on one pipe that fills", async () => {
    const queue = newQueue();
    // Runs of 40 lines of 100 characters on stdout, then one line on stderr, 200 times: 800 KB.
    const script = 'for i in $(seq 1 200); do seq -f "%0100g" 1 40; echo "err $i" >&2; done';
    const staged = await fitq(['stage', '--shell', '--', script], { queue });
    const id = staged.stdout.trim();
    expect((await fitq(['worker', '--run-once', '--log-format', 'json'], { queue })).exitCode).toBe(0);
    const stored = (await (await connectClient(queue)).readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
    expect(stored.filter((line) => line.startsWith('err '))).toHaveLength(200);
    for (const args of [['logs', id], ['logs', '-f', id]]) {
      const printed = await fitqMerged(args, { queue, readAfterMs: 1000 });
      expect(printed.exitCode).toBe(0);
      const lines = printed.output.trimEnd().split('\n');
      expect(lines.slice(0, stored.length)).toEqual(stored);
    }
  });
});
