/**
 * Runs do not inherit the worker's fitq credentials: its Redis URL (with its
 * password), TLS files and signing secret stay out of their environment, and
 * so out of their logs in Redis, unless the worker passes its connection
 * settings on with --pass-redis-env. Real worker processes against a real
 * redis-server with an ACL user.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLogEntries } from '../../src/operations/log-reads.js';
import { namespaceKeys } from '../../src/queue/keys.js';
import { CONNECTION_ENV, inheritedEnv, SECRET_ENV } from '../../src/worker/run-env.js';
import { fitq, newQueue } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const PASSWORD = 'run-env-Pa55w0rd';
const SECRET = 'run-env-signing-secret';
const SENTINEL_PASSWORD = 'run-env-sentinel-pw';

let server: RedisServer;
let dir: string;

beforeAll(async () => {
  server = await startRedisServer({ users: { fitq: `on >${PASSWORD} ~* &* +@all` } });
  dir = mkdtempSync(join(tmpdir(), 'fitq-run-env-'));
});

afterAll(async () => {
  await server.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Stages `env` signed, runs it on a `--run-once` worker with `workerArgs`, and returns the run's output as stored in Redis. */
async function runEnvOnWorker(workerArgs: string[]): Promise<{ output: string[]; url: string; secretFile: string }> {
  const queue = newQueue();
  const url = server.urlFor('fitq', PASSWORD);
  const secretFile = join(dir, `${queue}.secret`);
  writeFileSync(secretFile, SECRET);
  const env = { FITQ_REDIS_URL: url, REDIS_URL: url, FITQ_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD, FITQ_SECRET_FILE: secretFile, FITQ_SECRET: SECRET };
  const staged = await fitq(['stage', '--', 'env'], { queue, env });
  expect(staged.exitCode, staged.stderr).toBe(0);
  const id = staged.stdout.trim();
  const worker = await fitq(['worker', '--run-once', '--name', 'env-w', '--log-format', 'json', ...workerArgs], { queue, env });
  expect(worker.exitCode, worker.stderr).toBe(0);
  expect(worker.stdout).toContain(`Run ${id} completed`);
  const redis = new Redis(url);
  try {
    const keys = namespaceKeys(queue, process.env.FITQ_PREFIX || undefined);
    const entries = await readLogEntries({ redis, keys }, id);
    const output = entries.flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
    expect(output.some((line) => line === `FITQ_RUN_ID=${id}`), output.join('\n')).toBe(true);
    return { output, url, secretFile };
  } finally {
    redis.disconnect();
  }
}

describe("a run's environment", () => {
  it('holds none of the worker’s Redis URL, password or secret by default', async () => {
    const { output, secretFile } = await runEnvOnWorker([]);
    const text = output.join('\n');
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(SENTINEL_PASSWORD);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(secretFile);
    for (const name of [...CONNECTION_ENV, ...SECRET_ENV]) expect(output.some((line) => line.startsWith(`${name}=`)), name).toBe(false);
  });

  it('holds the worker’s Redis URL with --pass-redis-env, but never its secret', async () => {
    const { output, url, secretFile } = await runEnvOnWorker(['--pass-redis-env']);
    expect(output).toContain(`FITQ_REDIS_URL=${url}`);
    expect(output).toContain(`REDIS_URL=${url}`);
    expect(output).toContain(`FITQ_REDIS_SENTINEL_PASSWORD=${SENTINEL_PASSWORD}`);
    const text = output.join('\n');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(secretFile);
  });

  it('is built without TLS files unless passed on, then with absolute paths, the worker’s own first', () => {
    const env = {
      PATH: '/bin',
      FITQ_REDIS_URL: 'rediss://u:pw@h:1',
      REDIS_URL: 'rediss://u:pw@h:2',
      FITQ_REDIS_CA: '/etc/ca.pem',
      FITQ_REDIS_CERT: '/etc/cert.pem',
      FITQ_REDIS_KEY: '/etc/key.pem',
      FITQ_SECRET: 's',
      FITQ_SECRET_FILE: '/etc/secret',
      FITQ_QUEUE: 'q',
    };
    expect(inheritedEnv(env, false)).toEqual({ PATH: '/bin', FITQ_QUEUE: 'q' });
    const connection: Record<string, string> = { ...env };
    for (const name of SECRET_ENV) delete connection[name];
    expect(inheritedEnv(env, true)).toEqual(connection);
    expect(inheritedEnv(env, true, { redisUrl: 'rediss://flag:pw@h:3', tlsFiles: { ca: 'ca.pem', key: '/k.pem' } })).toEqual({
      ...connection,
      FITQ_REDIS_URL: 'rediss://flag:pw@h:3',
      FITQ_REDIS_CA: join(process.cwd(), 'ca.pem'),
      FITQ_REDIS_KEY: '/k.pem',
    });
  });
});
