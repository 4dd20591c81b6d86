/**
 * Signed runs end to end: a real redis-server, workers in this process and
 * as `fitq worker` processes, runs staged by the client and by `fitq stage`.
 * Commands that must never run would leave a marker file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { REJECTED_FORMAT, REJECTED_MISMATCH, REJECTED_UNSIGNED } from '../../src/security/signing.js';
import { alterRunData, connectClient, fitq, indexShapeByHand, messages, newQueue, parseJsonLog, readRunData, redisUrl, stagedShape, startTestWorker } from '../support/fitq.js';

const SECRET = `fitq-test-secret-${randomBytes(12).toString('hex')}`;
const OTHER_SECRET = `fitq-other-secret-${randomBytes(12).toString('hex')}`;
const STARTUP_LINE = 'Runs must be signed: unsigned or altered runs are rejected';

// Closed before the leak guard of test/support/fitq.ts runs (after hooks run last-registered first).
const ownClients: FitqClient[] = [];
afterEach(async () => {
  await Promise.all(ownClients.splice(0).map((client) => client.close()));
});

async function clientWith(queue: string, secret?: string): Promise<FitqClient> {
  const client = await FitqClient.connect({ redisUrl: redisUrl(), queue, secret });
  ownClients.push(client);
  return client;
}

function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'fitq-signed-'));
}

function writeSecretFile(dir: string, content = `${SECRET}\n`, name = 'secret'): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

async function field(client: FitqClient, runId: string, name: string): Promise<string | null> {
  return client.redis.hget(client.keys.run(runId), name);
}

/** Every value stored in a namespace (hashes, sets, zsets, streams, strings), as one text. */
async function dumpNamespace(client: FitqClient): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.redis.scan(cursor, 'MATCH', `${client.keys.base}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await client.redis.type(key);
      if (type === 'hash') parts.push(JSON.stringify(await client.redis.hgetall(key)));
      else if (type === 'stream') parts.push(JSON.stringify(await client.redis.xrange(key, '-', '+')));
      else if (type === 'zset') parts.push(JSON.stringify(await client.redis.zrange(key, 0, -1)));
      else if (type === 'set') parts.push(JSON.stringify(await client.redis.smembers(key)));
      else if (type === 'list') parts.push(JSON.stringify(await client.redis.lrange(key, 0, -1)));
      else if (type === 'string') parts.push(String(await client.redis.get(key)));
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('signed runs', () => {
  it('a signed run completes on a worker with the same secret (fitq stage and fitq worker, --secret-file)', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const secretFile = writeSecretFile(dir);
    const marker = join(dir, 'ran');
    const staged = await fitq(['stage', '--secret-file', secretFile, '--', 'touch', marker], { queue });
    expect(staged.exitCode).toBe(0);
    const id = staged.stdout.trim();
    const client = await connectClient(queue);
    expect((await readRunData(client, id)).signature).toMatch(/^v1:[0-9a-f]{64}$/);

    const worker = await fitq(['worker', '--secret-file', secretFile, '--run-once', '--log-format', 'json', '--name', 'signed-w'], {
      queue,
    });
    expect(worker.exitCode).toBe(0);
    expect(await client.getRun(id)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'signed-w' });
    expect(existsSync(marker)).toBe(true);
    expect(messages(parseJsonLog(worker.stdout))).toContain(STARTUP_LINE);
  });

  it('a worker without a secret runs signed runs too', async () => {
    const queue = newQueue();
    const client = await clientWith(queue, SECRET);
    const { runs } = await client.stage({ command: ['true'] });
    const { worker, logs } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    expect((await client.getRun(runs[0]!.id)).status).toBe('completed');
    expect(messages(logs)).not.toContain(STARTUP_LINE);
  });

  it('an unsigned run is rejected by a worker with a secret (FITQ_SECRET); its command never runs', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const marker = join(dir, 'must-not-exist');
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['touch', marker] });
    const id = runs[0]!.id;
    expect(await field(client, id, 'signature')).toBeNull();

    const worker = await fitq(['worker', '--run-once', '--log-format', 'json', '--name', 'strict-w'], { queue, env: { FITQ_SECRET: SECRET } });
    expect(worker.exitCode).toBe(0);
    expect(await client.getRun(id)).toMatchObject({ status: 'rejected', reason: REJECTED_UNSIGNED, worker: 'strict-w' });
    expect((await client.getRun(id)).exitCode).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
    const log = parseJsonLog(worker.stdout);
    expect(log).toContainEqual(expect.objectContaining({ level: 40, msg: `Run ${id} ${REJECTED_UNSIGNED}` }));
    expect(messages(log)).not.toContain(`Run ${id} started`);
    // Its log ends with the status; it wrote nothing else.
    expect(await client.readLog(id)).toEqual([expect.objectContaining({ kind: 'end', status: 'rejected' })]);

    const listed = await fitq(['runs', '--status', 'rejected'], { queue });
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('rejected: run is not signed');
  });

  it('rejects a signed run whose command, shell, cwd, env, demands, pin, retries or priority was altered in Redis', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const elsewhere = scratchDir();
    const client = await clientWith(queue, SECRET);
    const stage = async (name: string) => (await client.stage({ command: ['touch', join(dir, name)], runId: `${queue}-${name}` })).runs[0]!.id;
    const alterations: Record<string, unknown> = {
      command: ['touch', join(dir, 'injected')],
      shell: true,
      cwd: elsewhere,
      env: { INJECTED: '1' },
      resources: 'x=0.5',
      gpus: '0',
      retries: 5,
      priority: 7,
    };
    const altered: string[] = [];
    for (const [name, value] of Object.entries(alterations)) {
      const id = await stage(name);
      await alterRunData(client, id, (data) => (data[name] = value));
      altered.push(id);
    }
    const unsigned = await stage('signature-removed');
    await alterRunData(client, unsigned, (data) => delete data.signature);
    const forged = await stage('signature-forged');
    const signature = String((await readRunData(client, forged)).signature);
    await alterRunData(client, forged, (data) => (data.signature = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0')));
    const garbled = await stage('signature-garbled');
    await alterRunData(client, garbled, (data) => (data.signature = 'v1:not-hex'));
    const untouched = await stage('untouched');

    const { worker, logs } = await startTestWorker(queue, { secret: SECRET, runOnce: true });
    await worker.done;

    for (const id of [...altered, forged]) {
      expect(await client.getRun(id), id).toMatchObject({ status: 'rejected', reason: REJECTED_MISMATCH });
    }
    expect(await client.getRun(unsigned)).toMatchObject({ status: 'rejected', reason: REJECTED_UNSIGNED });
    expect(await client.getRun(garbled)).toMatchObject({ status: 'rejected', reason: REJECTED_FORMAT });
    // The untouched run ran, so the worker did run things; nothing else did.
    expect(await client.getRun(untouched)).toMatchObject({ status: 'completed' });
    expect(readdirSync(dir)).toEqual(['untouched']);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(messages(logs)).toContain(`Run ${altered[0]} ${REJECTED_MISMATCH}`);
    expect(messages(logs).filter((message) => message.endsWith('started'))).toEqual([`Run ${untouched} started`]);
  });

  it('rejects a run signed with another secret', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const marker = join(dir, 'must-not-exist');
    const client = await clientWith(queue, OTHER_SECRET);
    const { runs } = await client.stage({ command: ['touch', marker] });
    const { worker } = await startTestWorker(queue, { secret: SECRET, runOnce: true });
    await worker.done;
    expect(await client.getRun(runs[0]!.id)).toMatchObject({ status: 'rejected', reason: REJECTED_MISMATCH });
    expect(existsSync(marker)).toBe(false);
  });

  it('rejects a signed run moved into a cheaper staged index: the claim must reserve what was signed', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const marker = join(dir, 'must-not-exist');
    const client = await clientWith(queue, SECRET);
    const { runs } = await client.stage({ command: ['touch', marker], resources: 'cpu=4' });
    const id = runs[0]!.id;
    // Only the index and the shape change; the signed fields stay as they were.
    const [signed, cheaper] = [stagedShape('cpu=4'), stagedShape('cpu=1')];
    const score = await client.redis.zscore(client.keys.staged(signed), id);
    await client.redis.multi()
      .zrem(client.keys.staged(signed), id).zrem(client.keys.group('cpu'), signed)
      .zadd(client.keys.staged(cheaper), score!, id)
      .hset(client.keys.run(id), 'shape', cheaper)
      .exec();
    await indexShapeByHand(client.redis, client.keys, cheaper, score!);
    const { worker } = await startTestWorker(queue, { secret: SECRET, resources: 'cpu=1', runOnce: true });
    await worker.done;
    expect(await client.getRun(id)).toMatchObject({
      status: 'rejected',
      reason: "rejected: the claim reserved 'cpu=1' but the signed run demands 'cpu=4' (its staged index was altered)",
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('binds the run id and the namespace: a copy of a signed run under another id, or in another queue, is rejected', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const ranFile = join(dir, 'ran.txt');
    const client = await clientWith(queue, SECRET);
    const { runs } = await client.stage({ command: ['sh', '-c', `echo "$FITQ_RUN_ID" >> '${ranFile}'`] });
    const original = runs[0]!.id;
    const fields = await client.redis.hgetall(client.keys.run(original));

    /** Stores the run's hash under another id (and maybe another namespace) and stages it there. */
    const copy = async (target: FitqClient, copyId: string) => {
      await target.redis.hset(target.keys.run(copyId), fields);
      await target.redis.zadd(target.keys.staged(fields.shape!), fields.score!, copyId);
      await indexShapeByHand(target.redis, target.keys, fields.shape!, fields.score!);
      await target.redis.zadd(target.keys.queue.key('prioritized'), fields.score!, copyId);
      await target.redis.zadd(target.keys.ids, 0, copyId);
    };
    await copy(client, 'copy-renamed');
    const otherQueue = newQueue();
    const other = await clientWith(otherQueue, SECRET);
    await copy(other, original); // same id, another namespace

    const { worker } = await startTestWorker(queue, { secret: SECRET, runOnce: true });
    const { worker: otherWorker } = await startTestWorker(otherQueue, { secret: SECRET, runOnce: true });
    await Promise.all([worker.done, otherWorker.done]);

    expect(await field(client, original, 'status')).toBe('completed');
    for (const id of ['copy-renamed']) {
      expect([await field(client, id, 'status'), await field(client, id, 'reason')]).toEqual(['rejected', REJECTED_MISMATCH]);
    }
    expect([await field(other, original, 'status'), await field(other, original, 'reason')]).toEqual(['rejected', REJECTED_MISMATCH]);
    expect(readFileSync(ranFile, 'utf8')).toBe(`${original}\n`);
  });

  it('a worker keeps working after rejecting a run', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const plain = await connectClient(queue);
    const signing = await clientWith(queue, SECRET);
    const { worker, logs } = await startTestWorker(queue, { name: 'keeps-going', secret: SECRET });

    const bad = (await plain.stage({ command: ['touch', join(dir, 'bad')] })).runs[0]!.id;
    expect(await plain.waitForEnd(bad)).toMatchObject({ status: 'rejected', reason: REJECTED_UNSIGNED });
    const good = (await signing.stage({ command: ['touch', join(dir, 'good')], env: { NAME: 'é 😀' } })).runs[0]!.id;
    expect(await plain.waitForEnd(good)).toMatchObject({ status: 'completed', worker: 'keeps-going' });

    expect(readdirSync(dir)).toEqual(['good']);
    expect(worker.failure).toBeUndefined();
    expect(worker.activeRuns).toEqual([]);
    expect((await plain.listWorkers()).map((live) => live.name)).toEqual(['keeps-going']);
    expect(messages(logs)).toEqual(expect.arrayContaining([STARTUP_LINE, `Run ${bad} ${REJECTED_UNSIGNED}`, `Run ${good} completed`]));
  });
});

describe('secret configuration', () => {
  it('a secret file that cannot be read, or is empty, is one line and exit 2, for stage and worker; nothing happens', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const missing = join(dir, 'missing');
    const empty = writeSecretFile(dir, '\n', 'empty');
    const cases: { args: string[]; env?: Record<string, string>; error: string }[] = [];
    for (const command of [['stage'], ['worker', '--run-once']]) {
      const tail = command[0] === 'stage' ? ['--', 'true'] : [];
      cases.push(
        { args: [...command, '--secret-file', missing, ...tail], error: `Error: cannot read --secret-file '${missing}': no such file` },
        { args: [...command, '--secret-file', dir, ...tail], error: `Error: cannot read --secret-file '${dir}': it is a directory` },
        { args: [...command, '--secret-file', empty, ...tail], error: `Error: --secret-file '${empty}' is empty` },
        { args: [...command, ...tail], env: { FITQ_SECRET_FILE: missing }, error: `Error: cannot read FITQ_SECRET_FILE '${missing}': no such file` },
        { args: [...command, ...tail], env: { FITQ_SECRET: '' }, error: 'Error: FITQ_SECRET is empty' },
      );
    }
    const results = await Promise.all(cases.map((one) => fitq(one.args, { queue, env: one.env })));
    results.forEach((result, i) => {
      const label = cases[i]!.args.join(' ');
      expect(result.exitCode, label).toBe(2);
      expect(result.stderr.trimEnd().split('\n'), label).toEqual([cases[i]!.error]);
      expect(result.stdout, label).toBe('');
    });
    const client = await connectClient(queue);
    expect(await client.listRuns()).toEqual([]);
    expect(await client.listWorkers()).toEqual([]);
  });

  it('--secret-file wins over FITQ_SECRET_FILE, which wins over FITQ_SECRET', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const right = writeSecretFile(dir, `${SECRET}\n`, 'right');
    const wrong = writeSecretFile(dir, `${OTHER_SECRET}\n`, 'wrong');
    const stage = async (args: string[], env: Record<string, string>) => {
      const result = await fitq(['stage', ...args, '--', 'true'], { queue, env });
      expect(result.exitCode).toBe(0);
      return result.stdout.trim();
    };
    const byFlag = await stage(['--secret-file', right], { FITQ_SECRET_FILE: wrong, FITQ_SECRET: OTHER_SECRET });
    const byFileVariable = await stage([], { FITQ_SECRET_FILE: right, FITQ_SECRET: OTHER_SECRET });
    const byVariable = await stage([], { FITQ_SECRET: SECRET });
    const { worker } = await startTestWorker(queue, { secret: SECRET, runOnce: true });
    await worker.done;
    const client = await connectClient(queue);
    for (const id of [byFlag, byFileVariable, byVariable]) expect((await client.getRun(id)).status, id).toBe('completed');
  });

  it('never shows the secret: not in CLI output, worker logs, run output, or anything stored in Redis', async () => {
    const queue = newQueue();
    const dir = scratchDir();
    const secretFile = writeSecretFile(dir);
    const env = { FITQ_SECRET: SECRET };
    // A signed run that prints its whole environment (the worker has FITQ_SECRET in its own).
    const signedRun = await fitq(['stage', '--json', '--', 'env'], { queue, env });
    expect(signedRun.exitCode).toBe(0);
    const signedId = (JSON.parse(signedRun.stdout) as { id: string }[])[0]!.id;
    const client = await connectClient(queue);
    const unsignedId = (await client.stage({ command: ['env'] })).runs[0]!.id;

    const worker = await fitq(['worker', '--secret-file', secretFile, '--run-once', '--name', 'quiet-w'], { queue, env });
    expect(worker.exitCode).toBe(0);
    expect(worker.stdout).toContain(`Run ${signedId} completed`);
    expect(worker.stdout).toContain(`Run ${unsignedId} ${REJECTED_UNSIGNED}`);
    const output = (await client.readLog(signedId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
    expect(output.some((line) => line.startsWith('FITQ_RUN_ID='))).toBe(true);
    expect(output.some((line) => line.startsWith('FITQ_SECRET='))).toBe(false);

    const shown = await Promise.all([
      fitq(['runs', '--json'], { queue, env }),
      fitq(['runs', 'show', signedId], { queue, env }),
      fitq(['logs', signedId], { queue, env }),
    ]);
    const everything = [signedRun, worker, ...shown].flatMap((result) => [result.stdout, result.stderr]).join('\n') + (await dumpNamespace(client));
    expect(everything).toContain(signedId);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(Buffer.from(SECRET).toString('hex'));
  });
});
