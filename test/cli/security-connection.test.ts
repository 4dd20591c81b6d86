/**
 * TLS and ACL users end to end, through the real CLI and real worker
 * processes, against real redis-servers: a TLS-only server verified with the
 * test CA (and one that requires a client certificate), a wrong CA, TLS files
 * given wrongly, an ACL user holding exactly the permissions fitq needs, a
 * wrong password, and users lacking permissions. Every failure is one line
 * on stderr, with no stack trace and no password.
 */
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer, type TlsFiles } from '../support/redis-server.js';
import { aclRule, PREFIX } from '../support/acl-rules.js';
import { fitq, newQueue, parseJsonLog, type CliResult } from '../support/fitq.js';

/**
 * The operator's rule of docs/security.md (everything fitq does: stage,
 * workers, runs, logs -f, cancel, pool, rm, retention), for every namespace
 * under the key prefix: tests here use a new namespace each.
 */
const FITQ_ACL_RULES = aclRule('admin', '*', 'unused').replace(/^on >unused /, '');

const PASSWORD = 'Pa55/w@rd:s3cret';
const WRONG_PASSWORD = 'N0t-the-Pa55w0rd';

/** Each failure: the exit code, one line on stderr with all of `parts`, no stack trace. */
function expectOneLine(result: CliResult, exitCode: number, ...parts: string[]): void {
  const context = `exit ${result.exitCode}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.exitCode, context).toBe(exitCode);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, context).toHaveLength(1);
  expect(lines[0], context).toMatch(/^Error: /);
  for (const part of parts) expect(lines[0], context).toContain(part);
  expect(result.stderr + result.stdout, context).not.toMatch(/^\s+at /m);
}

function expectOk(result: CliResult): void {
  expect(result.exitCode, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
}

/** Environment pointing fitq at a URL, with TLS files or none (clearing any the test runner has). */
function envFor(url: string, files: Partial<Record<'ca' | 'cert' | 'key', string>> = {}): Record<string, string> {
  return { FITQ_REDIS_URL: url, REDIS_URL: '', FITQ_REDIS_CA: files.ca ?? '', FITQ_REDIS_CERT: files.cert ?? '', FITQ_REDIS_KEY: files.key ?? '' };
}

/**
 * Stages a run, runs a real worker process (`--run-once`) until it has
 * completed it, and reads it back with `runs`, `logs` and `logs -f`, all
 * with the given environment and extra arguments.
 */
async function runEndToEnd(env: Record<string, string>, args: string[] = []): Promise<void> {
  const queue = newQueue();
  const stage = await fitq(['stage', ...args, '-r', 'slot=1', '--', 'sh', '-c', 'echo out-line; echo err-line >&2'], { queue, env });
  expectOk(stage);
  const id = stage.stdout.trim();
  expect(id).toMatch(/^[0-9a-f]{12}$/);

  const worker = await fitq(['worker', ...args, '-r', 'slot=1', '--run-once', '--name', 'secure-1', '--log-format', 'json'], {
    queue,
    env,
  });
  expectOk(worker);
  const log = parseJsonLog(worker.stdout).map((entry) => entry.msg);
  expect(log, worker.stdout).toContain(`Run ${id} completed`);

  const [runs, logs, follow] = await Promise.all([
    fitq(['runs', ...args, '--json'], { queue, env }),
    fitq(['logs', id, ...args], { queue, env }),
    fitq(['logs', id, '-f', ...args], { queue, env }),
  ]);
  for (const result of [runs, logs, follow]) expectOk(result);
  expect(JSON.parse(runs.stdout)).toMatchObject({ runs: [{ id, status: 'completed', exitCode: 0, worker: 'secure-1' }], next: null });
  for (const output of [logs, follow]) expect(output.stdout.trim()).toBe('out-line');
  expect(logs.stderr.trim()).toBe('err-line');
  expect(follow.stderr.trim()).toBe(`err-line\nrun ${id} completed`);
}

describe('TLS (rediss://)', () => {
  let server: RedisServer;
  let strict: RedisServer;
  let tls: TlsFiles;

  beforeAll(async () => {
    [server, strict] = await Promise.all([
      startRedisServer({ tls: true, users: { fitq: `on >${PASSWORD} ${FITQ_ACL_RULES}` } }),
      startRedisServer({ tls: { authClients: 'yes' } }),
    ]);
    tls = server.tls!;
  });

  afterAll(async () => {
    await Promise.all([server?.dispose(), strict?.dispose()]);
  });

  it('stages, runs to completion on a worker, and shows runs and logs, verifying the server with --redis-ca', async () => {
    expect(server.url).toMatch(/^rediss:\/\//);
    await runEndToEnd(envFor(server.url), ['--redis-ca', tls.ca]);
  });

  it('an ACL user over TLS, with the CA from FITQ_REDIS_CA and the URL in capitals (REDISS://): the whole round trip', async () => {
    await runEndToEnd(envFor(server.urlFor('fitq', PASSWORD).replace('rediss://', 'REDISS://'), { ca: tls.ca }));
  });

  it('an ACL user over TLS with a wrong password: refused in one line, exit 1, the password never shown', async () => {
    const wrong = await fitq(['runs'], { queue: newQueue(), env: envFor(server.urlFor('fitq', WRONG_PASSWORD), { ca: tls.ca }) });
    expectOneLine(wrong, 1, `Redis at rediss://fitq:***@127.0.0.1:${server.port} refused the login`, 'WRONGPASS');
    expect(wrong.stderr + wrong.stdout).not.toContain(WRONG_PASSWORD);
  });

  it('the server speaks only TLS: a plain redis:// URL to its port fails with one line, exit 1', async () => {
    const result = await fitq(['runs'], { queue: newQueue(), env: envFor(server.url.replace('rediss://', 'redis://')) });
    expectOneLine(result, 1, server.url.replace('rediss://', 'redis://'));
  });

  it('with a server that requires client certificates: works with --redis-cert/--redis-key or FITQ_REDIS_CERT/FITQ_REDIS_KEY', async () => {
    const files = strict.tls!;
    await runEndToEnd(envFor(strict.url), ['--redis-ca', files.ca, '--redis-cert', files.cert, '--redis-key', files.key]);
    const byEnv = await fitq(['workers'], { queue: newQueue(), env: envFor(strict.url, files) });
    expect(byEnv, byEnv.stderr).toMatchObject({ exitCode: 0, stdout: 'No live workers.' });
  });

  it('with a server that requires client certificates: without one, every command fails with one line, exit 1', async () => {
    const queue = newQueue();
    const env = envFor(strict.url, { ca: strict.tls!.ca });
    const results = await Promise.all([
      fitq(['runs'], { queue, env }),
      fitq(['stage', '--', 'true'], { queue, env }),
      fitq(['worker', '-r', 'slot=1', '--run-once'], { queue, env }),
    ]);
    for (const result of results) expectOneLine(result, 1, `TLS connection to Redis at ${strict.url} failed`, 'certificate required');
  });

  it('a server that resets the connection as TLS is set up (TLS 1.3 refusing a client certificate): one line naming TLS and the certificate', async () => {
    const resetting = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    const url = `rediss://127.0.0.1:${(resetting.address() as AddressInfo).port}`;
    try {
      const result = await fitq(['runs'], { queue: newQueue(), env: envFor(url, { ca: strict.tls!.ca }) });
      expectOneLine(result, 1, `TLS connection to Redis at ${url} failed`, 'client certificate required?');
    } finally {
      resetting.close();
    }
  });

  it('a CA that did not sign the server certificate (or none: the system CAs): one line, exit 1, for every command', async () => {
    const queue = newQueue();
    const results = await Promise.all([
      fitq(['runs', '--redis-ca', tls.otherCa], { queue, env: envFor(server.url) }),
      fitq(['stage', '--', 'true'], { queue, env: envFor(server.url, { ca: tls.otherCa }) }),
      fitq(['worker', '-r', 'slot=1', '--run-once'], { queue, env: envFor(server.url, { ca: tls.otherCa }) }),
      fitq(['runs'], { queue, env: envFor(server.url) }),
    ]);
    for (const result of results) {
      expectOneLine(result, 1, `TLS connection to Redis at ${server.url} failed`, 'certificate');
    }
  });
});

describe('TLS files given wrongly', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedisServer({ tls: true });
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('with a plain redis:// URL: a usage error naming the flag or variable, exit 2', async () => {
    const queue = newQueue();
    const plain = 'redis://127.0.0.1:6390';
    const [byFlag, byEnv, worker] = await Promise.all([
      fitq(['runs', '--redis-url', plain, '--redis-ca', server.tls!.ca], { queue, env: envFor('') }),
      fitq(['stage', '--', 'true'], { queue, env: envFor(plain, { cert: server.tls!.cert, key: server.tls!.key }) }),
      fitq(['worker', '-r', 'slot=1', '--run-once', '--redis-key', server.tls!.key], { queue, env: envFor(plain) }),
    ]);
    expectOneLine(byFlag, 2, '--redis-ca', 'rediss://', plain);
    expectOneLine(byEnv, 2, 'FITQ_REDIS_CERT', 'rediss://');
    expectOneLine(worker, 2, '--redis-key', 'rediss://');
  });

  it('a file that cannot be read, or is not a certificate or key: one line quoting the path, exit 2', async () => {
    const queue = newQueue();
    const env = envFor(server.url);
    const missing = '/nonexistent/fitq-ca.pem';
    const files = server.tls!;
    // A key that exists but is not the client certificate's: the other CA's, beside its certificate.
    const wrongKey = files.otherCa.replace(/\.crt$/, '.key');
    const [noFile, noEnvFile, keyAsCa, certWithoutKey, mismatch] = await Promise.all([
      fitq(['worker', '-r', 'slot=1', '--run-once', '--redis-ca', missing], { queue, env }),
      fitq(['runs'], { queue, env: envFor(server.url, { ca: files.ca, cert: files.cert, key: missing }) }),
      fitq(['runs', '--redis-ca', files.key], { queue, env }),
      fitq(['runs', '--redis-ca', files.ca, '--redis-cert', files.cert], { queue, env }),
      fitq(['runs', '--redis-ca', files.ca, '--redis-cert', files.cert, '--redis-key', wrongKey], { queue, env }),
    ]);
    expectOneLine(noFile, 2, `cannot read --redis-ca file '${missing}'`, 'no such file');
    expectOneLine(noEnvFile, 2, `cannot read FITQ_REDIS_KEY file '${missing}'`);
    expectOneLine(keyAsCa, 2, `--redis-ca file '${files.key}'`, 'no PEM certificate');
    expectOneLine(certWithoutKey, 2, '--redis-cert', '--redis-key');
    expectOneLine(mismatch, 2, `--redis-key '${wrongKey}'`, 'key values mismatch');
  });
});

describe('ACL users', () => {
  let server: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedisServer({
      users: {
        fitq: `on >${PASSWORD} ${FITQ_ACL_RULES}`,
        // Can read, cannot run scripts, not even read-only ones.
        reader: `on >${PASSWORD} ~${PREFIX}:* &${PREFIX}:* +@read +info`,
        // Every command, but not fitq's keys.
        elsewhere: `on >${PASSWORD} ~other:* &${PREFIX}:* +@all`,
        // fitq's commands and keys, but no pub/sub channel.
        deaf: `on >${PASSWORD} ${FITQ_ACL_RULES.replace(`&${PREFIX}:*`, '')}`,
        // Everything but the command BullMQ fetches jobs with.
        noclaim: `on >${PASSWORD} ${FITQ_ACL_RULES.replace('+lpush', '')}`,
      },
    });
    // The default user stays on, with every permission: it reads the ACL log.
    admin = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await admin.connect();
  });

  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });

  /** Permission denials Redis logged for a user (ACL LOG); the login failures aside. */
  async function deniedFor(user: string): Promise<string[]> {
    const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
    return log
      .map((entry) => {
        const fields: Record<string, unknown> = {};
        for (let i = 0; i + 1 < entry.length; i += 2) fields[String(entry[i])] = entry[i + 1];
        return fields;
      })
      .filter((fields) => fields.username === user && fields.reason !== 'auth')
      .map((fields) => `${String(fields.reason)} ${String(fields.object)} (${String(fields.context)})`);
  }

  it("a user with only the operator's documented rule stages, runs to completion on a worker, and reads runs and logs; Redis denied it nothing", async () => {
    const url = server.urlFor('fitq', PASSWORD);
    expect(url).toContain(encodeURIComponent(PASSWORD));
    await runEndToEnd(envFor(url));

    // The rest of the CLI: pools, workers, cancel, rm, and a batch staged in several script calls.
    const queue = newQueue();
    const env = envFor(url);
    expectOk(await fitq(['pool', 'set', 'lic=2'], { queue, env }));
    const staged = await fitq(['stage', '-r', 'lic=1', '-r', 'nowhere=1', '--', 'true'], { queue, env });
    expectOk(staged);
    const id = staged.stdout.trim();
    const [pool, workers, show] = await Promise.all([
      fitq(['pool', 'ls', '--json'], { queue, env }),
      fitq(['workers', '--json'], { queue, env }),
      fitq(['runs', 'show', id], { queue, env }),
    ]);
    for (const result of [pool, workers, show]) expectOk(result);
    expectOk(await fitq(['cancel', id], { queue, env }));
    expectOk(await fitq(['runs', 'rm', id], { queue, env }));
    expectOk(await fitq(['pool', 'rm', 'lic'], { queue, env }));
    // History retention: its settings, runs removed as others end, and runs clean.
    expectOk(await fitq(['retention', '--keep-failed', '1', '--max-age', '1h'], { queue, env }));
    const more = await fitq(['stage', '--repeat', '3', '-r', 'nowhere=1', '--', 'true'], { queue, env });
    expectOk(more);
    expectOk(await fitq(['cancel', ...more.stdout.trim().split('\n')], { queue, env }));
    expectOk(await fitq(['retention', '--keep-failed', 'off'], { queue, env }));
    expect((await fitq(['runs', 'clean', '--status', 'canceled'], { queue, env })).stdout.trim()).toBe('Removed 1 run.');
    expectOk(await fitq(['retention', '--reset'], { queue, env }));
    const batch = await fitq(['stage', '--repeat', '2001', '-r', 'nowhere=1', '--', 'true'], { queue, env });
    expectOk(batch);
    expect(batch.stdout.trim().split('\n')).toHaveLength(2001);

    expect(await deniedFor('fitq')).toEqual([]);
  });

  it('a wrong password or an unknown user: one line, exit 1, for every command, and the password never shown', async () => {
    const queue = newQueue();
    const wrong = server.urlFor('fitq', WRONG_PASSWORD);
    const results = await Promise.all([
      fitq(['runs'], { queue, env: envFor(wrong) }),
      fitq(['stage', '--', 'true'], { queue, env: envFor(wrong) }),
      fitq(['worker', '-r', 'slot=1', '--run-once'], { queue, env: envFor(wrong) }),
      fitq(['workers', '--redis-url', wrong], { queue, env: envFor('') }),
    ]);
    for (const result of results) {
      expectOneLine(result, 1, `Redis at redis://fitq:***@127.0.0.1:${server.port} refused the login`, 'WRONGPASS');
      expect(result.stderr + result.stdout).not.toContain(WRONG_PASSWORD);
      expect(result.stderr + result.stdout).not.toContain(encodeURIComponent(WRONG_PASSWORD));
    }
    const unknown = await fitq(['runs'], { queue, env: envFor(server.urlFor('mallory', WRONG_PASSWORD)) });
    expectOneLine(unknown, 1, 'refused the login');
    expect(unknown.stderr).not.toContain(WRONG_PASSWORD);
  });

  it('a user lacking a permission fitq needs: one line saying what Redis refused, exit 1, no stack trace', async () => {
    const queue = newQueue();
    const as = (user: string) => envFor(server.urlFor(user, PASSWORD));
    const [readerStage, readerRuns, elsewhereRuns, deafWorker] = await Promise.all([
      fitq(['stage', '--', 'true'], { queue, env: as('reader') }),
      fitq(['runs'], { queue, env: as('reader') }),
      fitq(['runs'], { queue, env: as('elsewhere') }),
      fitq(['worker', '-r', 'slot=1', '--run-once', '--name', 'deaf-1'], { queue, env: as('deaf') }),
    ]);
    expectOneLine(readerStage, 1, 'Redis refused a command', 'NOPERM', "'eval'");
    expectOneLine(elsewhereRuns, 1, 'Redis refused a command', 'NOPERM', 'keys');
    expectOneLine(deafWorker, 1, 'Redis refused a command', 'channel');
    // A user allowed to read only gets its answer: reads only read, so there is nothing it was refused.
    expect(readerRuns).toMatchObject({ exitCode: 0, stdout: 'No runs.', stderr: '' });
    // Judging why a staged run waits needs the server's clock (TIME, for workers' liveness) and a
    // read-only script (EVALSHA_RO), which this user lacks: the first refusal is named.
    expectOk(await fitq(['stage', '-r', 'nowhere=1', '--', 'true'], { queue, env: as('fitq') }));
    const readerStaged = await fitq(['runs'], { queue, env: as('reader') });
    expect(readerStaged.exitCode).toBe(1);
    expect(readerStaged.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^Error: Redis refused a command: NOPERM .*'time'.* \(the Redis user lacks a permission fitq needs\)$/),
    ]);
    for (const result of [readerStage, readerRuns, readerStaged, elsewhereRuns, deafWorker]) {
      expect(result.stderr + result.stdout).not.toContain(PASSWORD);
    }
  });

  it('a worker whose user cannot run what claiming needs stops with one line, exit 1, instead of hanging; the run stays staged', async () => {
    const queue = newQueue();
    const env = envFor(server.urlFor('noclaim', PASSWORD));
    const staged = await fitq(['stage', '-r', 'slot=1', '--', 'true'], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const worker = await fitq(['worker', '-r', 'slot=1', '--name', 'noclaim-1', '--kill-grace', '1'], { queue, env, timeoutMs: 30_000 });
    expectOneLine(worker, 1, 'Redis refused a command claiming runs needs', "can't run this command");
    // The refused claim reserved nothing and left the run where it was.
    const runs = await fitq(['runs', '--json'], { queue, env });
    const [run] = (JSON.parse(runs.stdout) as { runs: Record<string, unknown>[] }).runs;
    expect(run).toMatchObject({ id: staged.stdout.trim(), status: 'staged' });
    expect(run).not.toHaveProperty('epoch');
    expect(run).not.toHaveProperty('worker');
  });
});
