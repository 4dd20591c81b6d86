/**
 * The ACL rules of docs/security.md, read from the page: a worker, a stager,
 * a read-only user, a read-only dashboard (BullMQ, Bull Board) and an
 * operator, each for one namespace, on a real redis-server. Each role's
 * flows, run through the real CLI, real worker processes, BullMQ and Bull
 * Board's API, succeed with only its rule, and Redis logs no denial for them
 * but those the page names; each role is refused what its rule keeps from
 * it, in one line, with the namespace left as it was. What a rule cannot
 * stop (whoever may run EVAL may run any Lua with its commands) is shown
 * too, as the page says. Each rule is checked against the commands of the
 * scripts its role runs.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { execa } from 'execa';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountBullBoard } from '../../src/dashboard/bull-board.js';
import { FitqClient, READ_ONLY_NOTE } from '../../src/client.js';
import { namespaceKeys } from '../../src/queue/keys.js';
import { luaInclude } from '../../src/queue/lua-source.js';
import { aclCommands, aclRule, ACL_ROLES, PREFIX, type AclRole } from '../support/acl-rules.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { snapshotKeys } from '../support/key-snapshot.js';
import { BIN, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const PASSWORD = randomBytes(12).toString('hex');

/** The namespace every role's rule is for, and one none of them may touch. */
const QUEUE = newQueue();
const OTHER = newQueue();
const keys = namespaceKeys(QUEUE, PREFIX);

let server: RedisServer;
/** The default user: every permission; reads the ACL log and sets up what a test needs. */
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer({
    users: Object.fromEntries(ACL_ROLES.map((role) => [`fitq-${role}`, aclRule(role, QUEUE, PASSWORD)])),
  });
  admin = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
});

const closeAfterAll: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const close of closeAfterAll) await close();
  admin?.disconnect();
  await server?.dispose();
});

const urlOf = (role: AclRole) => server.urlFor(`fitq-${role}`, PASSWORD);

/** `fitq ARGS` as a role, in the rules' namespace (or `queue`). */
function as(role: AclRole, args: string[], queue = QUEUE): Promise<CliResult> {
  return fitq(args, { queue, env: { FITQ_REDIS_URL: urlOf(role), REDIS_URL: '' } });
}

function expectOk(result: CliResult): void {
  expect(result.exitCode, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
}

/** Permission denials Redis logged since the last call (ACL LOG), per user; the log is reset. */
async function denials(): Promise<Record<string, string[]>> {
  const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
  await admin.call('ACL', 'LOG', 'RESET');
  const byUser: Record<string, string[]> = {};
  for (const entry of log) {
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < entry.length; i += 2) fields[String(entry[i])] = String(entry[i + 1]);
    (byUser[fields.username!] ??= []).push(`${fields.reason} ${fields.object} (${fields.context})`);
  }
  return byUser;
}

/**
 * Bull Board as the dashboard mounts it, read-only, for the rules' namespace
 * as `role`: a function answering a request to its API path, the board's
 * name of the namespace's queue, and close.
 */
async function mountBoard(role: AclRole): Promise<{ api: (path: string) => Promise<Response>; queueName: string; close(): Promise<void> }> {
  const client = await FitqClient.connect({ redisUrl: urlOf(role), queue: QUEUE, prefix: PREFIX });
  const app = new Hono();
  const board = mountBullBoard(app, { basePath: '/board', clients: new Map([[QUEUE, client]]), readOnly: true });
  return {
    api: (path) => Promise.resolve(app.request(`/board/api${path}`)),
    queueName: board.queueNames.get(QUEUE)!,
    close: async () => {
      await board.close();
      await client.close();
    },
  };
}

/** BullMQ's metrics as if the last run ended two minutes ago: the next end adds data points (LPUSH, LTRIM). */
async function ageMetrics(): Promise<void> {
  const twoMinutesAgo = Date.now() - 120_000;
  for (const state of ['completed', 'failed']) {
    await admin.hset(keys.queue.key(`metrics:${state}`), 'count', 0, 'prevTS', twoMinutesAgo, 'prevCount', 0);
  }
}

/** Each key of a namespace with its content, canonical. */
async function snapshot(queue: string): Promise<Map<string, string>> {
  return snapshotKeys(admin, namespaceKeys(queue, PREFIX).base);
}

/**
 * Refused in one `Error:` line (the last on stderr) holding every part,
 * exit 1, no stack trace; the only other line a read-only user's note.
 */
function expectRefused(result: CliResult, ...parts: string[]): void {
  const context = `exit ${result.exitCode}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.exitCode, context).toBe(1);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines.at(-1), context).toMatch(/^Error: /);
  for (const part of parts) expect(lines.at(-1), context).toContain(part);
  expect(lines.slice(0, -1).filter((line) => line !== `Warning: ${READ_ONLY_NOTE}`), context).toEqual([]);
  expect(result.stderr + result.stdout, context).not.toMatch(/^\s+at /m);
}

/** A connection as a role, for refusals fitq's commands would never try. */
async function connectAs(role: AclRole): Promise<Redis> {
  const redis = new Redis(urlOf(role), { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  return redis;
}

describe('each role with only its rule', () => {
  it('workers, a stager, a reader and an operator share a namespace; Redis denies none of them anything', async () => {
    await denials();
    // The operator: a pool, and history retention that trims as runs end.
    expectOk(await as('admin', ['pool', 'set', 'lic=1']));
    expectOk(await as('admin', ['retention', '--keep-completed', '1']));

    // The stager stages; runs end in a new minute of BullMQ's metrics.
    await ageMetrics();
    const stage = async (args: string[]) => {
      const result = await as('stager', ['stage', ...args]);
      expectOk(result);
      return result.stdout.trim().split('\n');
    };
    const [out] = await stage(['-r', 'slot=1', '--run-id', 'out', '--', 'sh', '-c', 'echo out-line; echo err-line >&2']);
    const [failing] = await stage(['-r', 'slot=1', '--run-id', 'failing', '--', 'sh', '-c', 'exit 3']);
    const [long] = await stage(['-r', 'slot=1', '--run-id', 'long', '--', 'sh', '-c', 'echo started; exec sleep 60']);
    const [nowhere] = await stage(['-r', 'nowhere=1', '--run-id', 'nowhere', '--', 'true']);
    // A worker that dies holding a run with a retry left: its run is re-staged when it is reaped.
    const [orphan] = await stage(['-r', 'only-w2=1', '--retries', '1', '--run-id', 'orphan', '--', 'sh', '-c', 'echo orphan-started; exec sleep 60']);

    // Two workers: w1 runs most; w2, with a short lease, is killed while it runs the orphan.
    const w2 = spawnCliWorker(QUEUE, ['-r', 'only-w2=1', '--name', 'w2', '--lease', '2'], urlOf('worker'));
    await w2.waitForMessage(`Run ${orphan} started`);
    // A lease long enough that a blocked log follower would wait long without CLIENT UNBLOCK.
    const w1 = spawnCliWorker(QUEUE, ['-r', 'slot=2', '--name', 'w1', '--lease', '60'], urlOf('worker'));
    await w1.waitForMessage(`Run ${out} completed`);
    await w1.waitForMessage(`Run ${failing} failed (exit code 3)`);
    await w1.waitForMessage(`Run ${long} started`);
    // Ending after out, it leaves out beyond the retention.
    const [licensed] = await stage(['-r', 'slot=1', '-r', 'lic=1', '--run-id', 'licensed', '--', 'echo', 'licensed-line']);
    await w1.waitForMessage(`Run ${licensed} completed`);
    w2.process.kill('SIGKILL');
    await w2.exited;
    await w1.waitForMessage('Worker w2 stopped renewing its lease: its runs are lost');

    // BullMQ retries the failed run (as Bull Board's retry would); w1 catches up and runs it again.
    const bull = new Queue(keys.queue.name, { prefix: keys.queue.prefix, connection: { url: server.url } });
    try {
      await (await bull.getJob(failing!))!.retry('failed');
    } finally {
      await bull.close();
    }
    await w1.waitForMessage(`Run ${failing} was retried from BullMQ (it was failed): staged again`);
    await waitFor(`run ${failing} failing again`, () => w1.messages().filter((m) => m === `Run ${failing} failed (exit code 3)`).length === 2);

    // The stager and the reader read everything.
    for (const role of ['stager', 'reader'] as const) {
      const [runs, show, logs, follow, workers, pool, retention] = await Promise.all([
        as(role, ['runs', '--json']),
        as(role, ['runs', 'show', 'or']),
        as(role, ['logs', licensed!]),
        as(role, ['logs', '-f', licensed!]),
        as(role, ['workers', '--json']),
        as(role, ['pool', 'ls', '--json']),
        as(role, ['retention', '--json']),
      ]);
      for (const result of [runs, show, logs, follow, workers, pool, retention]) expectOk(result);
      expect(JSON.parse(pool.stdout)).toMatchObject([{ name: 'lic' }]);
      expect(JSON.parse(retention.stdout)).toMatchObject({ keepCompleted: 1 });
      const listed = (JSON.parse(runs.stdout) as { runs: { id: string; status: string }[] }).runs;
      expect(Object.fromEntries(listed.map((run) => [run.id, run.status]))).toEqual({
        // Retention keeps one completed run: licensed ended last, out was removed.
        licensed: 'completed',
        failing: 'failed',
        long: 'running',
        nowhere: 'staged',
        orphan: 'staged',
      });
      expect(show.stdout).toMatch(/^status: +staged$/m);
      for (const output of [logs, follow]) expect(output.stdout.trim()).toBe('licensed-line');
      expect((JSON.parse(workers.stdout) as { name: string }[]).map((worker) => worker.name)).toEqual(['w1']);
      // Reads only read: nothing for the reader to be told it could not do.
      for (const result of [runs, show, logs, follow, workers]) expect(result.stderr.split('\n').filter((line) => line.startsWith('Warning:'))).toEqual([]);
    }

    // Ctrl-C stops following a running run at once, for both (CLIENT UNBLOCK ends the blocked read).
    for (const role of ['stager', 'reader'] as const) {
      const follower = execa('node', [BIN, 'logs', '-f', long!], {
        env: { FITQ_REDIS_URL: urlOf(role), REDIS_URL: '', FITQ_QUEUE: QUEUE, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
        reject: false,
        buffer: false,
      });
      let printed = '';
      follower.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      await waitFor(`${role}'s logs -f printing`, () => printed.includes('started'));
      follower.kill('SIGINT');
      // w1's lease is 60 s: without CLIENT UNBLOCK the read would block for most of it.
      await waitFor(`${role}'s logs -f to exit on Ctrl-C`, () => follower.exitCode !== null);
      expect((await follower).exitCode).toBe(130); // interrupted, as fitq wait exits
    }

    // The stager cancels a staged and a running run.
    expectOk(await as('stager', ['cancel', nowhere!, long!]));
    await w1.waitForMessage(`Run ${long} canceled`);

    // The operator stops the worker (it leaves) and puts retention back.
    expectOk(await as('admin', ['stop', 'w1', '--wait']));
    expect(await w1.exited).toMatchObject({ exitCode: 0 });
    expectOk(await as('admin', ['retention', '--reset']));

    expect(await denials()).toEqual({});
  });
});

describe("BullMQ's API and Bull Board, read-only", () => {
  it("the board's rule serves BullMQ's reads and Bull Board's views, and refuses BullMQ's writes", async () => {
    await denials();
    const staged = (await as('stager', ['stage', '-r', 'slot=1', '--repeat', '2', '--', 'echo', 'board-line'])).stdout.trim().split('\n');
    expectOk(await as('worker', ['worker', '-r', 'slot=1', '--run-once', '--name', 'board-w']));
    const [done, waiting] = [staged[0]!, (await as('stager', ['stage', '-r', 'nowhere=1', '--', 'true'])).stdout.trim()];
    const runs = (JSON.parse((await as('stager', ['runs', '--json'])).stdout) as { runs: { id: string; status: string }[] }).runs;
    const count = (status: string) => runs.filter((run) => run.status === status).length;
    const before = await snapshot(QUEUE);

    // Opened as a dashboard opens it: without writing the queue's settings (skipMetasUpdate).
    const bull = new Queue(keys.queue.name, { prefix: keys.queue.prefix, connection: { url: urlOf('board') }, skipMetasUpdate: true });
    const board = await mountBoard('board');
    const name = encodeURIComponent(board.queueName);
    try {
      expect(await bull.getJobCounts('prioritized', 'active', 'completed')).toEqual({ prioritized: count('staged'), active: count('running'), completed: count('completed') });
      expect((await bull.getJobs(['prioritized'])).map((job) => job.id)).toContain(waiting);
      expect((await bull.getJob(done))?.returnvalue).toBe(0);
      expect(await bull.getJobState(done)).toBe('completed');
      expect((await bull.getMetrics('completed')).meta.count).toBeGreaterThan(0);
      expect(await bull.isPaused()).toBe(false);
      expect((await bull.getJobLogs(done)).count).toBe(0);
      for (const path of [`/queues?activeQueue=${name}&status=prioritized&page=1`, `/queues/${name}/${done}`, `/queues/${name}/${done}/logs`, `/queues/${name}/metrics`]) {
        const response = await board.api(path);
        expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
        if (path.startsWith('/queues?')) expect(JSON.stringify(await response.json())).toContain(`"id":"${waiting}"`);
      }

      // Every write, plain or in BullMQ's scripts, is refused; nothing changed.
      await expect(bull.pause()).rejects.toThrow(/can't run this command|NOPERM/);
      await expect((await bull.getJob(waiting))!.remove()).rejects.toThrow(/can't run this command|NOPERM/);
      await expect((await bull.getJob(done))!.retry('completed')).rejects.toThrow(/can't run this command|NOPERM/);
      await expect(bull.add('run', {})).rejects.toThrow(/can't run this command|NOPERM/);
      expect(await snapshot(QUEUE)).toEqual(before);
    } finally {
      await board.close();
      await bull.close();
    }
    // Denied: commands inside BullMQ's write scripts above, and CLIENT LIST, with which Bull Board
    // lists workers (it shows every client of the server: not given; the board shows no workers).
    const denied = await denials();
    expect(Object.keys(denied)).toEqual(['fitq-board']);
    expect(denied['fitq-board']!.filter((entry) => !entry.endsWith(' (lua)'))).toEqual(['command client|list (toplevel)']);
  });
});

describe('a database number in the URL', () => {
  it('is the database fitq uses (SELECT): refused, ioredis would stay in database 0 without a word', async () => {
    await denials();
    const db1 = new Redis(`${server.url}/1`, { lazyConnect: true });
    await db1.connect();
    try {
      expectOk(await fitq(['stage', '-r', 'nowhere=1', '--run-id', 'in-db-1', '--', 'true'], { queue: QUEUE, env: { FITQ_REDIS_URL: `${urlOf('stager')}/1` } }));
      expect(await db1.hget(keys.run('in-db-1'), 'status')).toBe('staged');
      expect(await admin.exists(keys.run('in-db-1'))).toBe(0);
      const shown = await fitq(['runs', 'show', 'in-db-1'], { queue: QUEUE, env: { FITQ_REDIS_URL: `${urlOf('reader')}/1` } });
      expect(shown.stdout).toMatch(/^status: +staged$/m);
      expectOk(await fitq(['runs', 'rm', 'in-db-1'], { queue: QUEUE, env: { FITQ_REDIS_URL: `${urlOf('admin')}/1` } }));
      expect(await db1.dbsize()).toBe(0);
    } finally {
      db1.disconnect();
    }
    expect(await denials()).toEqual({});
  });
});

describe('a large batch', () => {
  it('the stager stages 2,001 runs at once (several script calls, one commit) and cancels them; the reader lists them; nothing denied', async () => {
    await denials();
    const batch = await as('stager', ['stage', '--repeat', '2001', '--label', 'batch=big', '-r', 'nowhere=1', '--', 'true']);
    expectOk(batch);
    expect(batch.stdout.trim().split('\n')).toHaveLength(2001);
    const listed = await as('reader', ['runs', '--label', 'batch=big', '--all', '--json']);
    expectOk(listed);
    expect((JSON.parse(listed.stdout) as { runs: { status: string }[] }).runs.filter((run) => run.status === 'staged')).toHaveLength(2001);
    expectOk(await as('stager', ['cancel', '--label', 'batch=big']));
    expectOk(await as('admin', ['runs', 'clean', '--status', 'canceled']));
    expect(await denials()).toEqual({});
  });
});

describe('what each rule refuses', () => {
  it('the reader writes nothing: every command that writes is refused in one line, and the namespace stays as it was', async () => {
    const staged = (await as('stager', ['stage', '-r', 'nowhere=1', '--repeat', '2', '--', 'true'])).stdout.trim().split('\n');
    expectOk(await as('stager', ['cancel', staged[1]!]));
    const before = await snapshot(QUEUE);
    const commands = [
      ['stage', '--', 'true'],
      ['cancel', staged[0]!],
      ['runs', 'rm', staged[1]!],
      ['runs', 'clean'],
      ['pool', 'set', 'lic=2'],
      ['retention', '--keep-completed', '5'],
      ['pause'],
      ['worker', '-r', 'slot=1', '--run-once', '--name', 'reader-1'],
    ];
    // One after another: eight at once on a loaded machine starved the test's process past Redis's connect timeout.
    for (const command of commands) expectRefused(await as('reader', command), 'Redis refused', 'NOPERM', "'eval'");
    expect(await snapshot(QUEUE)).toEqual(before);

    const reader = await connectAs('reader');
    try {
      await expect(reader.hset(keys.settings, 'keepCompleted', '1')).rejects.toThrow(/NOPERM .*'hset'/);
      await expect(reader.eval('return 1', 0)).rejects.toThrow(/NOPERM .*'eval'/);
      // Inside a script, as outside: no write command (and a read-only script may write nothing anyway).
      await expect(reader.call('EVAL_RO', "return redis.call('DEL', KEYS[1])", 1, keys.ids)).rejects.toThrow(/can't run this command/);
      await expect(reader.publish(keys.events, '{}')).rejects.toThrow(/NOPERM/);
      await expect(reader.subscribe(keys.events)).rejects.toThrow(/NOPERM/);
      await expect(reader.zrange(namespaceKeys(OTHER, PREFIX).ids, 0, -1)).rejects.toThrow(/NOPERM/);
    } finally {
      reader.disconnect();
    }
    expect(await snapshot(QUEUE)).toEqual(before);
    await denials();
  });

  it("the stager: no other namespace, no worker's lock, lease or wake-ups; yet EVAL lets it write any key of its namespace", async () => {
    const results = await Promise.all([as('stager', ['runs'], OTHER), as('stager', ['stage', '--', 'true'], OTHER)]);
    for (const result of results) expectRefused(result, 'Redis refused', 'NOPERM', 'keys');
    expect(await snapshot(OTHER)).toEqual(new Map());

    const stager = await connectAs('stager');
    try {
      await expect(stager.pexpire(`${keys.run('any')}:lock`, 1000)).rejects.toThrow(/NOPERM .*'pexpire'/);
      await expect(stager.subscribe(keys.events)).rejects.toThrow(/NOPERM .*'subscribe'/);
      await expect(stager.hgetall(namespaceKeys(OTHER, PREFIX).settings)).rejects.toThrow(/NOPERM/);

      // What the rule cannot stop: fitq's operator commands, and any Lua with its commands.
      expectOk(await as('stager', ['pool', 'set', 'stager-made=1']));
      const forged = keys.worker('forged').info;
      await stager.eval("return redis.call('HSET', KEYS[1], 'name', 'forged')", 1, forged);
      expect(await admin.hget(forged, 'name')).toBe('forged');
    } finally {
      stager.disconnect();
      await admin.del(keys.worker('forged').info);
      expectOk(await as('admin', ['pool', 'rm', 'stager-made']));
    }
    await denials();
  });

  it('the worker and the operator: no other namespace, nothing beyond what fitq does', async () => {
    const results = await Promise.all([
      as('worker', ['worker', '-r', 'slot=1', '--run-once', '--name', 'elsewhere-1'], OTHER),
      as('admin', ['pool', 'set', 'lic=1'], OTHER),
    ]);
    for (const result of results) expectRefused(result, 'Redis refused', 'NOPERM', 'keys');
    expect(await snapshot(OTHER)).toEqual(new Map());
    for (const role of ['worker', 'admin'] as const) {
      const redis = await connectAs(role);
      try {
        for (const command of [['KEYS', '*'], ['FLUSHDB'], ['CONFIG', 'GET', 'maxmemory'], ['SCRIPT', 'FLUSH'], ['CLIENT', 'LIST'], ['FUNCTION', 'LIST']]) {
          await expect(redis.call(command[0]!, ...command.slice(1)), command.join(' ')).rejects.toThrow(/NOPERM/);
        }
      } finally {
        redis.disconnect();
      }
    }
    await denials();
  });
});

/** The scripts each role's flows run (the operator: all of them). */
const SCRIPTS_OF: Record<Exclude<AclRole, 'admin' | 'board'>, readonly string[]> = {
  worker: ['registerWorker', 'heartbeat', 'claimRun', 'reclaimRun', 'appendLog', 'finishRun', 'deregisterWorker', 'reapWorkers', 'reconcileRuns', 'dropHold', 'recordGpuProbe', 'recordUsage', 'checkPreemption', 'refuseRequest'],
  // Staging reaps first, updating reconciles first, cancelling waits (reaping) for the end.
  // (Listing a namespace an older fitq staged indexes its runs' order first: indexRunOrder.)
  stager: ['stageRuns', 'commitBatch', 'abortBatch', 'reapWorkers', 'reconcileRuns', 'explainRuns', 'resolveRunIds', 'cancelRun', 'updateRuns', 'setHeld', 'restartRuns', 'indexRunOrder', 'readFairShare'],
  // The read-only scripts only (EVAL_RO): reads do no upkeep.
  reader: ['explainRuns', 'resolveRunIds', 'readMetrics', 'readFairShare'],
};

/** What each role sends besides its scripts' commands, and why (docs/security.md says the same). */
const CLIENT_COMMANDS: Record<Exclude<AclRole, 'board'>, Record<string, string>> = {
  worker: {
    info: "ioredis's ready check; the check that Redis never evicts keys",
    select: 'a database number in the URL',
    'client|setname': "its connection named as BullMQ names its workers' (Queue.getWorkers, Bull Board)",
    eval: 'scripts, sent once per connection', evalsha: 'scripts',
    subscribe: 'wake-ups, cancel and stop hints on the namespace channel',
    lpop: 'notifications of runs that ended without their worker (notify:outbox)',
    hget: "--require-signed: the key registered for each run's user (user-keys)",
    wait: '--redis-wait-replicas: claims and ends confirmed by replicas',
  },
  stager: {
    info: "ioredis's ready check; the eviction warning",
    select: 'a database number in the URL',
    'client|id': 'logs -f: the id of its blocked connection', 'client|unblock': 'logs -f: Ctrl-C ends the blocked read at once',
    eval: 'scripts, sent once per connection', evalsha: 'scripts',
    eval_ro: 'read-only scripts, sent once per connection', evalsha_ro: 'read-only scripts',
    xread: 'logs -f, wait and cancel waiting for the end',
    zcount: 'runs: the runs around a page, in the order index',
    wait: 'stage --redis-wait-replicas: staged runs confirmed by replicas',
  },
  reader: {
    info: "ioredis's ready check; the eviction warning",
    select: 'a database number in the URL',
    'client|id': 'logs -f: the id of its blocked connection', 'client|unblock': 'logs -f: Ctrl-C ends the blocked read at once',
    eval_ro: 'read-only scripts, sent once per connection', evalsha_ro: 'read-only scripts',
    exists: 'logs -f: whether a run it follows was removed', xrange: 'logs', xread: 'logs -f',
    smembers: "workers: each worker's runs; runs show: the runs that wait for a run", get: 'logs: a log packed as its run ended',
    lrange: "runs show: a run's earlier attempts",
    hget: 'runs clean: the status of each ended run (then EVAL is refused)',
    xrevrange: 'logs -f: where the event stream and the log end when it starts',
    zcount: 'runs, the dashboard: the runs around a page, in the order index',
  },
  admin: {
    info: "ioredis's ready check; the eviction check",
    select: 'a database number in the URL',
    'client|id': 'logs -f', 'client|unblock': 'logs -f', 'client|setname': 'fitq worker',
    eval: 'scripts', evalsha: 'scripts', eval_ro: 'read-only scripts', evalsha_ro: 'read-only scripts',
    subscribe: 'fitq worker, stop --wait', xread: 'logs -f',
    lpop: 'fitq worker: notifications of runs that ended without their worker',
    zcount: 'runs: the runs around a page, in the order index',
    wait: '--redis-wait-replicas',
  },
};

const LUA_DIR = new URL('../../src/queue/lua/', import.meta.url);

/** Every script by name (`claimRun`), its includes resolved. */
function scriptTexts(): Map<string, string> {
  const texts = new Map<string, string>();
  for (const file of readdirSync(LUA_DIR).filter((name) => name.endsWith('.lua'))) {
    const text = readFileSync(new URL(file, LUA_DIR), 'utf8');
    const includes = [...text.matchAll(/^-- @include ([\w/]+)$/gm)].map((match) => luaInclude(match[1]!));
    texts.set(file.replace(/-\d+\.lua$/, ''), [text, ...includes].join('\n'));
  }
  return texts;
}

/** The commands a script text calls (directly, or through includes/namespace/tryCall.lua), lower case. */
function commandsIn(text: string): string[] {
  return [...text.matchAll(/(?:redis\.p?call|tryCall)\(\s*["'](\w+)["']/g)].map((match) => match[1]!.toLowerCase());
}

describe("the rules and fitq's scripts", () => {
  it('each rule allows exactly what its scripts call and what its flows send besides', () => {
    const scripts = scriptTexts();
    // Every command a script calls is named literally, so the list below is complete.
    // (tryCall passes its own arguments on: `redis.pcall(...)`.)
    for (const [name, text] of scripts) expect(text, name).not.toMatch(/(?:redis\.p?call|tryCall)\(\s*(?!\.\.\.\))[^"'\s]/);
    // The board runs BullMQ's scripts, not fitq's: its flows are tested above.
    for (const role of ACL_ROLES.filter((name) => name !== 'board')) {
      const names = role === 'admin' ? [...scripts.keys()] : SCRIPTS_OF[role];
      const needed = new Set([...names.flatMap((name) => commandsIn(scripts.get(name)!)), ...Object.keys(CLIENT_COMMANDS[role])]);
      expect(new Set(aclCommands(role)), role).toEqual(needed);
    }
  });

  it("the reader's and the board's rules, and the reader's scripts, only read (COMMAND INFO)", async () => {
    const scripts = scriptTexts();
    const commands = new Set([
      ...aclCommands('reader'),
      ...aclCommands('board'),
      ...SCRIPTS_OF.reader.flatMap((name) => commandsIn(scripts.get(name)!)),
    ]);
    const writing: string[] = [];
    for (const command of commands) {
      const [info] = (await admin.call('COMMAND', 'INFO', command.split('|')[0]!)) as [unknown[]];
      if ((info[2] as string[]).includes('write')) writing.push(command);
    }
    expect(writing).toEqual([]);
  });
});
