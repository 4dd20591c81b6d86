import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';

describe('inspection commands', () => {
  it('fitq runs shows a table with status, requires, command, worker, exit and why waiting', async () => {
    const queue = newQueue();
    const done = (await fitq(['stage', '-r', 'foo=1', '--', 'sh', '-c', 'exit 3'], { queue })).stdout.trim();
    const { worker } = await startTestWorker(queue, { name: 'wa', resources: 'foo=2', runOnce: true });
    await worker.done;
    const waiting = (await fitq(['stage', '-r', 'foo=5', '--', 'true'], { queue })).stdout.trim();
    await startTestWorker(queue, { name: 'wb', resources: 'foo=2' });
    const table = await fitq(['runs'], { queue });
    expect(table.exitCode, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+USER\s+REQUIRES\s+COMMAND\s+WORKER\s+STARTED\s+DURATION\s+EXIT\s+WHY$/);
    expect(rows.find((row) => row.startsWith(done))).toMatch(new RegExp(`^${done}\\s+failed\\s+\\S+\\s+foo=1\\s+sh -c 'exit 3'\\s+wa\\s+\\S+\\s+\\S+\\s+3\\s+exit code 3$`));
    expect(rows.find((row) => row.startsWith(waiting))).toMatch(/staged\s+\S+\s+foo=5\s+true\s+needs more than any live worker has: foo=5 > 2$/);
    const json = (JSON.parse((await fitq(['runs', '--json', '--status', 'failed'], { queue })).stdout) as { runs: { id: string }[] }).runs;
    expect(json.map((run) => run.id)).toEqual([done]);
  });

  it('fitq runs show --json has the documented fields', async () => {
    const queue = newQueue();
    const id = (await fitq(['stage', '-r', 'foo=1', '--label', 'k=v', '--', 'echo', 'hello'], { queue })).stdout.trim();
    const { worker } = await startTestWorker(queue, { resources: 'foo=1', runOnce: true, name: 'ws' });
    await worker.done;
    const shown = await fitq(['runs', 'show', id, '--json'], { queue });
    const run = JSON.parse(shown.stdout) as Record<string, unknown>;
    expect(run).toMatchObject({ id, status: 'completed', command: ['echo', 'hello'], resources: { foo: 1 }, priority: 0, labels: { k: 'v' }, worker: 'ws', exitCode: 0 });
    for (const field of ['stagedAt', 'startedAt', 'endedAt']) expect(typeof run[field]).toBe('number');
    const text = await fitq(['runs', 'show', id], { queue });
    expect(text.stdout).toMatch(/^status:\s+completed$/m);
    const unknown = await fitq(['runs', 'show', 'nope'], { queue });
    expect(unknown).toMatchObject({ exitCode: 2 });
    expect(unknown.stderr.trim()).toBe("Error: unknown run 'nope'");
  });

  it('fitq logs prints the output; -f follows a live run until it ends', async () => {
    const queue = newQueue();
    const script = 'echo one; echo err >&2; sleep 0.5; echo two';
    const id = (await fitq(['stage', '--shell', '--', script], { queue })).stdout.trim();
    await startTestWorker(queue, { resources: '' });
    const followed = await fitq(['logs', id, '-f'], { queue });
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(followed.stdout).toBe('one\ntwo');
    expect(followed.stderr).toBe(`err\nrun ${id} completed`);
    const printed = await fitq(['logs', id], { queue });
    expect(printed.stdout).toBe('one\ntwo');
  });

  it('fitq workers lists capacity, usage, runs and heartbeat', async () => {
    const queue = newQueue();
    const id = (await fitq(['stage', '-r', 'foo=1.5', '--', 'sleep', '30'], { queue })).stdout.trim();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'wk', resources: 'foo=4 bar=1' });
    await expect.poll(async () => (await client.getRun(id)).status, { timeout: 10_000 }).toBe('running');
    const table = await fitq(['workers'], { queue });
    expect(table.stdout).toMatch(new RegExp(`^wk\\s+active\\s+\\S+\\s+\\d+\\s+bar=1 foo=4\\s+foo=1.5\\s+-\\s+${id}\\s+\\d+s ago$`, 'm'));
    const json = JSON.parse((await fitq(['workers', '--json'], { queue })).stdout) as Record<string, unknown>[];
    expect(json[0]).toMatchObject({ name: 'wk', capacity: { bar: 1, foo: 4 }, used: { foo: 1.5 }, free: { bar: 1, foo: 2.5 }, runs: [id], devices: {} });
  });

  it('fitq cancel cancels a staged run at once and stops a running one', async () => {
    const queue = newQueue();
    const staged = (await fitq(['stage', '-r', 'never=1', '--', 'true'], { queue })).stdout.trim();
    const canceled = await fitq(['cancel', staged], { queue });
    expect(canceled.stdout.trim()).toBe(`Run ${staged} canceled`);
    const running = (await fitq(['stage', '--', 'sleep', '60'], { queue })).stdout.trim();
    const client = await connectClient(queue);
    await startTestWorker(queue, { killGraceMs: 1000 });
    await expect.poll(async () => (await client.getRun(running)).status, { timeout: 10_000 }).toBe('running');
    const stopped = await fitq(['cancel', running], { queue });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(`Run ${running} canceled`);
    expect(await client.getRun(running)).toMatchObject({ status: 'canceled', reason: 'canceled (killed by signal SIGTERM)' });
    const again = await fitq(['cancel', running], { queue });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(`Run ${running} already canceled`);
  });

  it('fitq runs rm removes runs; a running one only with --force', async () => {
    const queue = newQueue();
    const a = (await fitq(['stage', '-r', 'never=1', '--', 'true'], { queue })).stdout.trim();
    const b = (await fitq(['stage', '--', 'sleep', '60'], { queue })).stdout.trim();
    const client = await connectClient(queue);
    await startTestWorker(queue, { killGraceMs: 1000 });
    await expect.poll(async () => (await client.getRun(b)).status, { timeout: 10_000 }).toBe('running');
    const refused = await fitq(['runs', 'rm', a, b], { queue });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`run '${b}' is running`);
    expect((await client.listRuns()).length).toBe(2);
    const forced = await fitq(['runs', 'rm', '--force', a, b], { queue });
    expect(forced.stdout.trim()).toBe('Removed 2 runs.');
    expect(await client.listRuns()).toEqual([]);
    expect(await client.redis.exists(client.keys.runLog(b), client.keys.runPackedLog(b))).toBe(0);
  });
});
