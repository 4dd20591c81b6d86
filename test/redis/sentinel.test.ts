/**
 * fitq behind a real Sentinel group (a master, a replica, three sentinels),
 * through a redis+sentinel:// URL: staging, a CLI worker, its runs staging
 * further runs with the URL it passes on (--pass-redis-env), and the
 * refusals of a URL that names the wrong master or no sentinel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { BIN, fitq, newQueue, redisUrl } from '../support/fitq.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';
import { waitFor } from '../support/wait.js';

let group: SentinelGroup;

beforeAll(async () => {
  group = await startSentinelGroup();
}, 60_000);

afterAll(async () => {
  await group?.dispose();
});

describe('Redis Sentinel (redis+sentinel://)', () => {
  it('stages, runs and shows runs through the sentinels; a run stages another with the URL its worker passes on', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: group.url };
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', `echo "url=$FITQ_REDIS_URL"; node '${BIN}' stage -r cpu=1 -- echo from-a-run`], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const parent = staged.stdout.trim();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--pass-redis-env'], group.url);
    await worker.waitForMessage(`Run ${parent} completed`);

    const logs = await fitq(['logs', parent], { queue, env });
    expect(logs.stdout).toContain(`url=${group.url}`);
    await waitForRuns(queue, 2);
    const runs = JSON.parse((await fitq(['runs', '--json'], { queue, env })).stdout) as { runs: { command: string; status: string }[] };
    expect(runs.runs.map((run) => [run.command.includes('from-a-run'), run.status])).toContainEqual([true, 'completed']);

    // The data lives on the master the sentinels name.
    const master = (await group.master()).connect();
    try {
      expect(await master.exists(`${process.env.FITQ_PREFIX || 'fitq'}:{${queue}}:runs:${parent}`)).toBe(1);
    } finally {
      master.disconnect();
    }
  });

  it('refuses an unknown master name and a server that is no sentinel in one line (exit 2); no sentinel reachable is exit 1', async () => {
    const queue = newQueue();
    const hosts = group.url.replace(/^redis\+sentinel:\/\//, '').replace(/\/.*$/, '');
    const unknown = await fitq(['stage', '--', 'true'], { queue, env: { FITQ_REDIS_URL: `redis+sentinel://${hosts}/nosuch` } });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr.trim()).toBe(`Error: the sentinels at ${hosts} know no master named 'nosuch' (the name after the hosts in the redis+sentinel:// URL)`);

    const server = `127.0.0.1:${new URL(redisUrl()).port}`;
    const notSentinel = await fitq(['runs'], { queue, env: { FITQ_REDIS_URL: `redis+sentinel://${server}/mymaster` } });
    expect(notSentinel.exitCode).toBe(2);
    expect(notSentinel.stderr.trim()).toMatch(new RegExp(`^Error: ${server.replace(/\./g, '\\.')} is a Redis server, not a sentinel`));

    const none = await fitq(['worker', '-r', 'cpu=1', '--run-once'], { queue, env: { FITQ_REDIS_URL: 'redis+sentinel://127.0.0.1:1/mymaster' } });
    expect(none.exitCode).toBe(1);
    expect(none.stderr.trim()).toBe('Error: cannot reach any sentinel at 127.0.0.1:1: connection refused or closed');
    for (const result of [unknown, notSentinel, none]) expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

async function waitForRuns(queue: string, count: number): Promise<void> {
  await waitFor(`${count} runs completed`, async () => {
    const result = await fitq(['runs', '--json'], { queue, env: { FITQ_REDIS_URL: group.url } });
    const runs = (JSON.parse(result.stdout) as { runs: { status: string }[] }).runs;
    return runs.filter((run) => run.status === 'completed').length === count;
  });
}
