/**
 * Commands on a Redis that is out of memory (maxmemory reached, noeviction),
 * for real: what writes is refused whole, in one line saying what Redis
 * refused and why, exit 1 as for any other Redis refusal, no stack trace;
 * nothing of it is done. What only reads (`fitq runs`, `fitq runs show`,
 * `fitq logs`, `fitq workers`) goes on. A private redis-server, since the
 * test fills it up.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { fillUp, startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.dispose();
});

const OUT_OF_MEMORY =
  "Error: Redis refused a command: OOM command not allowed when used memory > 'maxmemory' (Redis is out of memory: raise its maxmemory, or free memory)";

function expectRefused(result: CliResult): void {
  const context = `exit ${result.exitCode}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.exitCode, context).toBe(1);
  expect(result.stderr.split('\n').filter((line) => line.trim() !== ''), context).toEqual([OUT_OF_MEMORY]);
  expect(result.stderr + result.stdout, context).not.toMatch(/^\s+at /m);
}

function expectOk(result: CliResult): void {
  expect(result.exitCode, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
}

it('refuses what writes in one line, exit 1, and does none of it; reads go on', async () => {
  const queue = newQueue();
  const env = { FITQ_REDIS_URL: server.url };
  const client = await connectClient(queue, server.url);
  const [staged] = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs;
  const lift = await fillUp(server.url);
  try {
    const refused = await Promise.all([
      fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue, env }),
      // More than one script call's worth: several calls in one MULTI, which Redis discards.
      fitq(['stage', '--repeat', '2500', '--', 'true'], { queue, env }),
      fitq(['cancel', staged!.id], { queue, env }),
      fitq(['pause'], { queue, env }),
      fitq(['pool', 'set', 'licence=2'], { queue, env }),
      fitq(['worker', '-r', 'cpu=1', '--run-once'], { queue, env }),
    ]);
    refused.forEach(expectRefused);

    const runs = await fitq(['runs', '--json'], { queue, env });
    expectOk(runs);
    expect((JSON.parse(runs.stdout) as { runs: { id: string; status: string }[] }).runs.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: staged!.id, status: 'staged' },
    ]);
    expectOk(await fitq(['runs', 'show', staged!.id], { queue, env }));
    expectOk(await fitq(['logs', staged!.id], { queue, env }));
    const workers = await fitq(['workers'], { queue, env });
    expectOk(workers);
    expect(workers.stdout.trim()).toBe('No live workers.');
  } finally {
    await lift();
  }
  expect((await client.listRuns()).map(({ id, status }) => ({ id, status }))).toEqual([{ id: staged!.id, status: 'staged' }]);
  expect(await client.isPaused()).toBe(false);
  expect(await client.listPool()).toEqual([]);
  expect(await client.listWorkers()).toEqual([]);
});
