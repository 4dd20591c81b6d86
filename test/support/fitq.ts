/**
 * Test helpers: a namespace per test, clients and workers that are closed
 * after each test, and the real CLI run as a child process.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, expect, inject } from 'vitest';
import { FitqClient, resolveNamespace, type ClientOptions } from '../../src/client.js';
import { DEFAULT_LOG_MAX_LINES } from '../../src/model/logs.js';
import { createContext, type QueueContext } from '../../src/operations/context.js';
import { connectRedis } from '../../src/redis/connection.js';
import { closeRedis, openConnectionCount } from '../../src/redis/open-connections.js';
import { namespaceKey, namespaceKeys, type NamespaceKeys } from '../../src/queue/keys.js';
import { parseShape, shapeGroup } from '../../src/resources/shape.js';
import { secretKey, type Secret } from '../../src/security/secret.js';
import { stagerOf } from '../../src/model/stager.js';
import { liveRunProcessCount } from '../../src/worker/child.js';
import { runFitqInProcess } from './in-process-cli.js';
import { printWorkerLog } from './failure-logs.js';
import { FitqWorker, type WorkerOptions } from '../../src/worker/worker.js';
import type { RedisConnection } from '../../src/redis/connection.js';

export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
export const redisUrl = (): string => inject('redisUrl');
const EMPTY_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'fitq-config-'));

/**
 * The staged-index shape of runs this test process stages (as the OS user,
 * stager.ts): the demands' shape with `;u=<user>` (resources/shape.ts).
 */
export const stagedShape = (shape: string): string => `${shape};u=${stagerOf({}).user}`;

/** A fresh namespace, so tests never see each other's runs. */
export function newQueue(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

const clients: FitqClient[] = [];
const workers: FitqWorker[] = [];
/** Each in-process worker's log, printed when its test fails. */
const workerLogs: { name: string; logs: Record<string, unknown>[] }[] = [];
const contexts: QueueContext[] = [];

export async function connectClient(queue: string, url = redisUrl(), options: Omit<ClientOptions, 'queue' | 'redisUrl'> = {}): Promise<FitqClient> {
  const client = await FitqClient.connect({ ...options, redisUrl: url, queue });
  clients.push(client);
  return client;
}

/**
 * The context operations take (src/operations/context.ts), for a namespace,
 * as FitqClient makes its own: to call an operation directly, without the
 * client. Closed after the test.
 */
export async function connectContext(queue: string, options: { secret?: Secret } = {}): Promise<QueueContext> {
  const keys = namespaceKeys(queue, resolveNamespace({ queue }).prefix);
  const ctx = createContext({
    redis: await connectRedis({ redisUrl: redisUrl() }),
    keys,
    logMaxLines: DEFAULT_LOG_MAX_LINES,
    secret: secretKey(options.secret),
    stager: stagerOf(),
    connectResilient: () => connectRedis({ redisUrl: redisUrl(), evictionCheck: undefined }, true),
  });
  contexts.push(ctx);
  return ctx;
}

/**
 * Starts an in-process worker that logs JSON into `logs` (not to stdout).
 * `onLog` hears each entry as it is logged, synchronously: a test can act at
 * an exact point of the worker's work.
 */
export async function startTestWorker(
  queue: string,
  options: WorkerOptions = {},
  onLog?: (entry: Record<string, unknown>) => void,
): Promise<{ worker: FitqWorker; logs: Record<string, unknown>[] }> {
  const logs: Record<string, unknown>[] = [];
  const { pino } = await import('pino');
  const write = (line: string) => {
    const entry = JSON.parse(line) as Record<string, unknown>;
    logs.push(entry);
    onLog?.(entry);
  };
  const logger = pino({ level: 'info', base: undefined }, { write });
  const worker = await FitqWorker.start({
    redisUrl: redisUrl(),
    queue,
    logger,
    echoOutput: false,
    concurrency: 0,
    ...options,
  });
  workers.push(worker);
  workerLogs.push({ name: worker.name, logs });
  return { worker, logs };
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The environment of a fitq process run by a test. */
export function cliEnv(queue: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    FITQ_REDIS_URL: redisUrl(),
    FITQ_QUEUE: queue,
    FITQ_PREFIX: process.env.FITQ_PREFIX ?? '',
    // No config file of the machine's user: tests give their own.
    XDG_CONFIG_HOME: EMPTY_CONFIG_HOME,
    ...env,
  };
}

/**
 * Runs `fitq ARGS` against the test Redis: the real commands, in this
 * process (support/in-process-cli.ts), unless the test is about the process
 * itself (`process: true`): a worker or dashboard (unless `process: false`:
 * one refused before it starts), a time zone (Node keeps one per process),
 * signals.
 */
export async function fitq(
  args: string[],
  options: { queue: string; env?: Record<string, string>; timeoutMs?: number; input?: string; process?: boolean },
): Promise<CliResult> {
  const env = cliEnv(options.queue, options.env);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const ownProcess = options.process ?? (env.TZ !== undefined || ['worker', 'dashboard'].includes(args[0] ?? ''));
  if (!ownProcess) return runFitqInProcess(BIN, args, { env: { ...process.env, ...env }, timeoutMs, ...(options.input === undefined ? {} : { input: options.input }) });
  return fitqProcess(args, options);
}

/** `fitq ARGS`'s stdout (its trailing newline gone); a command that does not exit 0 fails the test with its stderr. */
export async function fitqOk(queue: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await fitq(args, { queue, env });
  if (result.exitCode !== 0) throw new Error(`fitq ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout.trimEnd();
}

/** `fitq stage ARGS` as this user (FITQ_USER): the ids it staged. */
export async function stageAsUser(queue: string, user: string, args: string[]): Promise<string[]> {
  return (await fitqOk(queue, ['stage', ...args], { FITQ_USER: user })).trim().split('\n');
}

/** Runs `fitq ARGS` as a real process against the test Redis. */
export async function fitqProcess(
  args: string[],
  options: { queue: string; env?: Record<string, string>; timeoutMs?: number; input?: string },
): Promise<CliResult> {
  const result = await execa('node', [BIN, ...args], {
    env: cliEnv(options.queue, options.env),
    reject: false,
    timeout: options.timeoutMs ?? 60_000,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** `fitq ARGS 2>&1`: stdout and stderr in one pipe, in the order fitq wrote them. */
export async function fitqMerged(args: string[], options: { queue: string; readAfterMs?: number }): Promise<{ exitCode: number; output: string }> {
  if (options.readAfterMs === undefined) {
    const result = await execa('sh', ['-c', 'node "$FITQ_TEST_BIN" "$@" 2>&1', 'sh', ...args], {
      env: cliEnv(options.queue, { FITQ_TEST_BIN: BIN }),
      reject: false,
      timeout: 60_000,
    });
    return { exitCode: result.exitCode ?? -1, output: String(result.stdout) };
  }
  // The pipe read only after a while: once it is full, fitq's writes to it wait (its exit code through a file).
  const codeFile = join(mkdtempSync(join(tmpdir(), 'fitq-merged-')), 'code');
  const script = `{ node "$FITQ_TEST_BIN" "$@" 2>&1; echo $? > '${codeFile}'; } | { sleep ${options.readAfterMs / 1000}; cat; }`;
  const result = await execa('sh', ['-c', script, 'sh', ...args], { env: cliEnv(options.queue, { FITQ_TEST_BIN: BIN }), reject: false, timeout: 60_000 });
  return { exitCode: Number(readFileSync(codeFile, 'utf8')), output: String(result.stdout) };
}

/** `fitq runs --expand --columns id,why` as a map of id to its WHY cell (an array's runs each their own). */
export async function cliWhy(queue: string): Promise<Map<string, string>> {
  const result = await fitq(['runs', '--expand', '--columns', 'id,why'], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  const [header, ...lines] = result.stdout.split('\n');
  const whyAt = header!.indexOf('WHY');
  return new Map(lines.map((line) => [line.slice(0, whyAt).trim(), line.slice(whyAt)]));
}

/** `fitq ARGS` started in the background, its output gathered as it comes. */
export function spawnFitq(queue: string, args: string[]): { child: ResultPromise; stdout: () => string; stderr: () => string } {
  const child = execa('node', [BIN, ...args], {
    env: cliEnv(queue),
    stdin: 'ignore',
    buffer: false,
    reject: false,
    timeout: 40_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Runs `fitq ARGS` where arguments, and the directory it runs in, may be any
 * bytes. Node passes strings (and Buffers) to a process as UTF-8, so the
 * bytes are made by sh's printf (octal escapes) and handed to `exec`.
 */
export async function fitqBytes(args: (string | Buffer)[], options: { queue: string; cwd?: Buffer }): Promise<CliResult> {
  // `$(...)` drops trailing newlines: a `_` is added and cut off again.
  const make = (value: string | Buffer) => `printf '${Array.from(Buffer.from(value), (byte) => `\\${byte.toString(8).padStart(3, '0')}`).join('')}_'`;
  const script = [
    ...(options.cwd === undefined ? [] : [`d=$(${make(options.cwd)}) && cd "\${d%_}" || exit 99`]),
    'set --',
    ...args.map((arg) => `a=$(${make(arg)}); set -- "$@" "\${a%_}"`),
    'exec node "$FITQ_TEST_BIN" "$@"',
  ].join('\n');
  const result = await execa('sh', ['-c', script], { env: cliEnv(options.queue, { FITQ_TEST_BIN: BIN }), reject: false, timeout: 60_000 });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Messages of parsed JSON log lines. */
export function messages(logs: readonly Record<string, unknown>[]): string[] {
  return logs.filter((entry) => entry.output === undefined).map((entry) => String(entry.msg));
}

/** Parses `fitq worker --log-format json` output into log messages. */
export function parseJsonLog(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

afterEach(async (context) => {
  for (const { name, logs } of workerLogs.splice(0)) printWorkerLog(context, `worker ${name}`, logs);
  await Promise.all(workers.splice(0).map((worker) => worker.stop({ now: true })));
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(contexts.splice(0).map((ctx) => closeRedis(ctx.redis)));
  // Leak guard: every connection and run process a test made must be gone.
  expect(openConnectionCount(), 'open Redis connections after the test').toBe(0);
  expect(liveRunProcessCount(), 'run processes still alive after the test').toBe(0);
});

/** A run's job data (what the run is), as stored: fitq's own copy, `runData`. */
export async function readRunData(client: FitqClient, runId: string): Promise<Record<string, unknown>> {
  return JSON.parse(String(await client.redis.hget(client.keys.run(runId), 'runData'))) as Record<string, unknown>;
}

/** Rewrites what a run is (its job data, fitq's copy and BullMQ's) in Redis, as anyone with write access could. */
export async function alterRunData(client: FitqClient, runId: string, alter: (data: Record<string, unknown>) => void): Promise<void> {
  const data = await readRunData(client, runId);
  alter(data);
  await client.redis.hset(client.keys.run(runId), 'data', JSON.stringify(data), 'runData', JSON.stringify(data));
}

/** The group of a text no shape (written by hand): its resource names, joined by commas. */
function groupOf(shape: string): string {
  const names = [...(shape.split(';')[0] ?? '').matchAll(/([^,=]+)=/g)].map((match) => match[1]!);
  return names.length > 0 ? names.join(',') : 'none';
}

/**
 * Puts a shape in fitq's index of groups by hand, at `score`, as anyone with
 * write access could, with the group's log (so workers' fit indexes see it).
 */
export async function indexShapeByHand(redis: RedisConnection, keys: NamespaceKeys, shape: string, score: number | string): Promise<void> {
  const parsed = parseShape(shape);
  const group = parsed ? shapeGroup(parsed) : groupOf(shape);
  const was = await redis.hget(keys.groups, group);
  const version = String(Math.max(Date.now() * 1000, Number(was ?? 0) + 1));
  const log = namespaceKey(keys.base, 'groupLog', group);
  await redis.zadd(keys.group(group), score, shape);
  await redis.hset(keys.groups, group, version);
  if (was === null) await redis.zadd(log, 0, '');
  await redis.zadd(log, version, shape);
}

/** Every shape in the namespace's index of groups. */
export async function indexedShapes(client: FitqClient): Promise<string[]> {
  const shapes: string[] = [];
  for (const group of Object.keys(await client.redis.hgetall(client.keys.groups))) {
    shapes.push(...(await client.redis.zrange(client.keys.group(group), 0, -1)));
  }
  return shapes.sort();
}
