/**
 * Bad input through the real CLI, against the test Redis: every refusal is one
 * line naming (quoting) the offending value, exit code 2, no stack trace, and
 * nothing written to Redis. Also what must be accepted and kept intact (label
 * values of any kind) and what must scale (staging 100,000 runs at once).
 *
 * Most tests here run concurrently and never open a connection counted by the
 * leak guard: they check Redis over a plain ioredis connection of their own.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitq, newQueue, redisUrl, type CliResult } from '../support/fitq.js';
import { startRedisServer } from '../support/redis-server.js';

let redis: Redis;

beforeAll(async () => {
  redis = new Redis(redisUrl(), { lazyConnect: true });
  await redis.connect();
});

afterAll(async () => {
  await redis.quit();
});

/** Every key whose name matches a glob pattern, sorted. */
async function keysMatching(pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

/** Escapes a glob pattern's special characters. */
const globLiteral = (text: string) => text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);

/** Every key of a namespace with its whole content: equal snapshots mean nothing changed. */
async function snapshot(queue: string): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  for (const key of await keysMatching(`*{${queue}}*`)) {
    const type = await redis.type(key);
    if (type === 'hash') result[key] = await redis.hgetall(key);
    else if (type === 'zset') result[key] = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'set') result[key] = (await redis.smembers(key)).sort();
    else if (type === 'string') result[key] = await redis.get(key);
    else if (type === 'list') result[key] = await redis.lrange(key, 0, -1);
    else if (type === 'stream') result[key] = await redis.xrange(key, '-', '+');
    else result[key] = type;
  }
  return result;
}

/** Exit code 2, exactly one line on stderr holding every fragment, no stack trace, nothing on stdout. */
function expectRefused(result: CliResult, ...fragments: string[]): void {
  expect(result.exitCode, result.stderr).toBe(2);
  const lines = result.stderr.split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^Error: /);
  for (const fragment of fragments) expect(lines[0]).toContain(fragment);
  expect(result.stderr).not.toContain('    at ');
  expect(result.stdout).toBe('');
}

/**
 * Runs `fitq ARGS` in a fresh namespace and expects a refusal that leaves the
 * namespace empty; in this process, a worker too (refused before it starts).
 */
async function refusedInFreshQueue(args: string[], fragments: string[], env: Record<string, string> = {}): Promise<void> {
  const queue = newQueue();
  const result = await fitq(args, { queue, env, process: false });
  expectRefused(result, ...fragments);
  expect(await snapshot(queue)).toEqual({});
}

const long = (length: number, char = 'a') => char.repeat(length);

describe.concurrent('malformed resource specs', () => {
  // One case per kind of mistake; test/resources/spec.test.ts covers the parser in depth.
  const stageCases: [string[], string][] = [
    [['=1'], "invalid resource spec '=1': empty resource name"],
    [['gpu'], "invalid resource spec 'gpu': expected NAME=VALUE"],
    [['gpu='], "invalid resource spec 'gpu=': expected NAME=VALUE"],
    [['g$pu=1'], "invalid resource spec 'g$pu=1': resource name must match"],
    [['gpu{x}=1'], "invalid resource spec 'gpu{x}=1': resource name must match"],
    [['g\u0001pu=1'], "invalid resource spec 'g\\x01pu=1': resource name must match"],
    [[`${long(65)}=1`], `invalid resource spec '${long(65)}=1': resource name must match`],
    [['gpu=-1'], "invalid resource spec 'gpu=-1': value must not be negative"],
    [['gpu=NaN'], "invalid resource spec 'gpu=NaN': expected a non-negative number"],
    [['gpu=Infinity'], "invalid resource spec 'gpu=Infinity': expected a non-negative number"],
    [['gpu=0.1234567'], "invalid resource spec 'gpu=0.1234567': more than 6 decimal places"],
    [['mem=8Q'], "invalid resource spec 'mem=8Q': unknown unit 'Q': K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024"],
    [['mem=8GBi'], "invalid resource spec 'mem=8GBi': unknown unit 'GBi'"],
    [['gpu=9007199254740992'], "invalid resource spec 'gpu=9007199254740992': value too large to keep exactly (at most 9007199254740991.999999)"],
    [[`gpu=${long(400, '9')}`], `invalid resource spec 'gpu=${long(196, '9')}…' (404 characters): value too large to keep exactly`],
    [['gpu=1 mem=2', 'mem=3'], "invalid resource spec 'mem=3': resource 'mem' given twice"],
  ];
  const workerCases: [string[], string][] = [
    [['=1'], "invalid resource spec '=1': empty resource name"],
    [['gpu='], "invalid resource spec 'gpu=': expected NAME=VALUE"],
    [['g$pu=1'], "invalid resource spec 'g$pu=1': resource name must match"],
    [['gpu=-1'], "invalid resource spec 'gpu=-1': value must not be negative"],
    [['gpu=1.0000001'], "invalid resource spec 'gpu=1.0000001': more than 6 decimal places"],
    [['mem=9007200T'], "invalid resource spec 'mem=9007200T': value too large to keep exactly"],
    [['gpu=1', 'gpu=2'], "invalid resource spec 'gpu=2': resource 'gpu' given twice"],
  ];

  it.each(stageCases)('fitq stage -r %j is refused, staging nothing', async (specs, message) => {
    await refusedInFreshQueue(['stage', ...specs.flatMap((spec) => ['-r', spec]), '--', 'true'], [message]);
  });

  it.each(workerCases)('fitq worker -r %j is refused, registering nothing', async (specs, message) => {
    await refusedInFreshQueue(['worker', '--run-once', ...specs.flatMap((spec) => ['-r', spec])], [message]);
  });

  it('a bad FITQ_RESOURCES is refused the same way, saying where it came from', async () => {
    await refusedInFreshQueue(['worker', '--run-once'], ["invalid resource spec 'gpu=8Q'", '(from FITQ_RESOURCES)'], { FITQ_RESOURCES: 'gpu=8Q' });
  });

  it.each([
    ['meta', "invalid run id 'meta': 'meta' names a key of the run queue; choose another"],
    ['prioritized', "invalid run id 'prioritized': 'prioritized' names a key of the run queue"],
    ['123', "invalid run id '123': it must not be a number only (add a letter)"],
  ])('fitq stage --run-id %s is refused (a job id BullMQ uses itself), staging nothing', async (id, message) => {
    await refusedInFreshQueue(['stage', '--run-id', id, '--', 'true'], [message]);
  });

  it('accepts the largest exact amount', async () => {
    const queue = newQueue();
    const result = await fitq(['stage', '--json', '-r', 'gpu=9007199254740991.999999', '--', 'true'], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    const [run] = JSON.parse(result.stdout) as { requires: string }[];
    expect(run?.requires).toBe('gpu=9007199254740991.999999');
  });
});

describe.concurrent('unknown runs', () => {
  // One namespace holding one staged run, shared: every test here only reads it.
  const queue = newQueue();
  let id = '';

  beforeAll(async () => {
    const staged = await fitq(['stage', '-r', 'never=1', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    id = staged.stdout.trim();
  });

  it.each([
    [['runs', 'show', 'nope', '--json']],
    [['logs', 'nope']],
    [['logs', 'nope', '-f']],
    [['cancel', 'nope']],
    [['cancel', 'nope', '--no-wait']],
    [['runs', 'rm', 'nope']],
    [['runs', 'rm', '--force', 'nope']],
    [['hold', 'nope']],
    [['release', 'nope']],
    [['restart', 'nope', '--cascade']],
  ])('fitq %j is refused and changes nothing', async (args) => {
    const before = await snapshot(queue);
    expect(Object.keys(before).filter((key) => key.endsWith(`:runs:${id}`))).toHaveLength(1);
    expectRefused(await fitq(args, { queue }), "Error: unknown run 'nope'");
    expect(await snapshot(queue)).toEqual(before);
  });

  it('fitq runs rm KNOWN UNKNOWN removes nothing: all or nothing', async () => {
    const before = await snapshot(queue);
    expectRefused(await fitq(['runs', 'rm', id, 'nope'], { queue }), "Error: unknown run 'nope'");
    expect(await snapshot(queue)).toEqual(before);
    expect(Object.keys(before).filter((key) => key.endsWith(`:runs:${id}`))).toHaveLength(1);
  });
});

describe.concurrent('missing command, missing --, bad --cwd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-bad-cwd-'));
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory\n');

  it.each([
    [['stage'], 'missing command: fitq stage [FLAGS] -- COMMAND [ARGS...]'],
    [['stage', '-r', 'gpu=1', '--label', 'k=v'], 'missing command'],
    [['stage', '--', ''], "missing command: '' is blank"],
    [['stage', '--shell', '--', ' '], "missing command: ' ' is blank"],
    [['stage', '--priority', '1', 'echo', 'hi'], "missing '--' before the command 'echo'"],
    [['stage', '--cwd', file, '--', 'true'], `--cwd '${file}' is not a directory`],
    [['stage', '--cwd', 'no/such/relative/dir', '--', 'true'], "--cwd 'no/such/relative/dir' does not exist"],
    [['stage', '--cwd', '', '--', 'true'], "--cwd '' is empty"],
  ])('fitq %j is refused, staging nothing', async (args, message) => {
    await refusedInFreshQueue(args, [message]);
  });
});

/** Every command that takes a run id, with the id in its place. */
const RUN_ID_COMMANDS = [
  (id: string) => ['stage', `--run-id=${id}`, '--', 'true'],
  (id: string) => ['runs', 'show', id],
  (id: string) => ['logs', id],
  (id: string) => ['logs', '-f', id],
  (id: string) => ['cancel', id],
  (id: string) => ['runs', 'rm', id],
  (id: string) => ['update', id, '--priority', '1'],
  (id: string) => ['wait', id],
  (id: string) => ['hold', id],
  (id: string) => ['release', id],
  (id: string) => ['restart', id],
  (id: string) => ['stage', '--after', id, '--', 'true'],
];

/** Commands that all connect to a namespace, with the connection flags to add. */
const QUEUE_COMMANDS = [
  (flags: string[]) => ['stage', ...flags, '--', 'true'],
  (flags: string[]) => ['runs', ...flags],
  (flags: string[]) => ['workers', ...flags],
  (flags: string[]) => ['worker', '--run-once', ...flags],
  (flags: string[]) => ['logs', 'abc', ...flags],
  (flags: string[]) => ['pool', 'set', 'license=1', ...flags],
];

describe.concurrent('ids, label keys and queue names that could forge keys', () => {
  const ids: [string, string][] = [
    ['x}:run:y', "'x}:run:y'"],
    ['{q}', "'{q}'"],
    ['a b', "'a b'"],
    ['a\nb', "'a\\nb'"],
    ['a\rb', "'a\\rb'"],
    ['*', "'*'"],
    ['id:', "'id:'"],
    [long(129), `'${long(129)}'`],
    [long(5000), `'${long(200)}…' (5000 characters)`],
  ];

  // One namespace holding one staged run, shared: every run id test only reads it.
  const queue = newQueue();

  beforeAll(async () => {
    const staged = await fitq(['stage', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
  });

  /** Runs each command against the namespace; expects the same refusal from each and no change. */
  async function refusedRunId(id: string, quoted: string, commands: ((id: string) => string[])[]): Promise<void> {
    const before = await snapshot(queue);
    expect(Object.keys(before).length).toBeGreaterThan(0);
    for (const command of commands) expectRefused(await fitq(command(id), { queue }), `invalid run id ${quoted}`);
    expect(await snapshot(queue)).toEqual(before);
    expect(await keysMatching(`*{${queue}}*${globLiteral(id.slice(0, 100))}*`)).toEqual([]);
  }

  it.each(ids)('run id %j is refused, and no key is made', async (id, quoted) => {
    // Each id through one command, in turn; "x}:run:y" below goes through all of them.
    const index = ids.findIndex(([candidate]) => candidate === id);
    await refusedRunId(id, quoted, [RUN_ID_COMMANDS[index % RUN_ID_COMMANDS.length]!]);
  });

  it('run id "x}:run:y" is refused by every command that takes a run id', async () => {
    await refusedRunId('x}:run:y', "'x}:run:y'", RUN_ID_COMMANDS);
  });

  it.each([
    ['a b', "'a b'"],
    ['a\nb', "'a\\nb'"],
    ['a{b}', "'a{b}'"],
    ['a}:run:y', "'a}:run:y'"],
    ['*', "'*'"],
    ['_x', "'_x'"],
    [long(129), `'${long(129)}'`],
  ])('label key %j is refused', async (key, quoted) => {
    await refusedInFreshQueue(['stage', '--label', `${key}=v`, '--', 'true'], [`invalid label name ${quoted}`]);
  });

  /** Runs commands with a bad queue name; expects the same refusal from each, and no key named after it anywhere. */
  async function refusedQueue(name: string, via: '--queue' | 'FITQ_QUEUE', commands: ((flags: string[]) => string[])[]): Promise<void> {
    const quoted = `'${name.replace('\n', '\\n')}'`;
    const flags = via === '--queue' ? ['--queue', name] : [];
    const env: Record<string, string> = via === 'FITQ_QUEUE' ? { FITQ_QUEUE: name } : {};
    // The namespace the test helper would use otherwise: it must stay empty too.
    const fallback = newQueue();
    for (const command of commands) expectRefused(await fitq(command(flags), { queue: fallback, env }), `invalid queue name ${quoted}`);
    expect(await keysMatching(`*${globLiteral(name)}*`)).toEqual([]);
    expect(await snapshot(fallback)).toEqual({});
  }

  const queueNames: [string, '--queue' | 'FITQ_QUEUE'][] = [
    ['a{b}', 'FITQ_QUEUE'],
    ['x}:run:y', '--queue'],
    ['*', '--queue'],
    ['a b', 'FITQ_QUEUE'],
    ['a\nb', 'FITQ_QUEUE'],
    ['q:1', '--queue'],
    [long(129), '--queue'],
  ];

  it.each(queueNames)('queue name %j given by %s is refused, and no key is made', async (name, via) => {
    // Each name through one command, in turn; "a}:{b" below goes through all of them.
    const index = queueNames.findIndex(([candidate]) => candidate === name);
    await refusedQueue(name, via, [QUEUE_COMMANDS[index % QUEUE_COMMANDS.length]!]);
  });

  it('queue name "a}:{b" given by FITQ_QUEUE is refused by every command', async () => {
    await refusedQueue('a}:{b', 'FITQ_QUEUE', QUEUE_COMMANDS);
  });
});

describe('label values of any kind', () => {
  it('are stored as given and shown back intact by runs show --json, and on one line by runs show', async () => {
    const queue = newQueue();
    const labels: Record<string, string> = {
      spaces: 'a  b c ',
      newlines: 'line 1\nline 2\r\n',
      braces: '{x}:run:y}*',
      colons: 'a:b::c',
      star: '*',
      quotes: `it's "quoted" \`too\``,
      backslash: 'C:\\dir\\n',
      unicode: 'héllo 🚀 日本語 עברית',
      control: '\u001b[31mred\u001b[0m\t',
      json: '{"a":[1,2]}',
      equals: 'a=b=c',
      empty: '',
      long: long(20_000, 'z'),
    };
    const result = await fitq(['stage', ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]), '--', 'true'], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    const id = result.stdout.trim();
    const shown = await fitq(['runs', 'show', id, '--json'], { queue });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { labels: unknown }).labels).toEqual(labels);
    const listed = (JSON.parse((await fitq(['runs', '--json'], { queue })).stdout) as { runs: { labels: unknown }[] }).runs;
    expect(listed.map((run) => run.labels)).toEqual([labels]);
    const text = await fitq(['runs', 'show', id], { queue });
    const labelLines = text.stdout.split('\n').filter((line) => line.startsWith('labels:'));
    expect(labelLines).toHaveLength(1);
    expect(labelLines[0]).toContain('newlines="line 1\\nline 2\\r\\n"');
    expect(text.stdout).not.toContain('\u001b');
    // The run's keys are the namespace's usual ones; nothing named after a value.
    expect(await keysMatching('*run:y*')).toEqual([]);
    expect(Object.keys(await snapshot(queue)).every((key) => key.includes(`{${queue}}:`))).toBe(true);
  });
});

describe.concurrent('values too large', () => {
  const big = (n: number) => long(n, 'x');

  it.each([
    [['stage', '--priority', '1000001', '--', 'true'], ["expected --priority to be an integer from -1000000 to 1000000, got '1000001'"]],
    [['stage', '--priority=-1000001', '--', 'true'], ["expected --priority to be an integer from -1000000 to 1000000, got '-1000001'"]],
    [['stage', '--repeat', '100001', '--', 'true'], ["expected --repeat to be an integer from 1 to 100000, got '100001'"]],
    [['stage', '--repeat=-5', '--', 'true'], ["expected --repeat to be an integer from 1 to 100000, got '-5'"]],
    [['stage', '--retries', '101', '--', 'true'], ["expected --retries to be an integer from 0 to 100, got '101'"]],
    [['stage', '--retries=-1', '--', 'true'], ["expected --retries to be an integer from 0 to 100, got '-1'"]],
    // A single argument cannot exceed 128 KiB (the kernel's limit), so three.
    [['stage', '--', big(50_000), big(50_000), big(50_000)], ['command too large: 150010 bytes of JSON (at most 131072), 3 arguments starting with', `'${big(200)}…' (50000 characters)`]],
    [['stage', '--shell', '--', big(70_000), big(70_000)], ['command too large', '(at most 131072)']],
    [['stage', '--env', `A=${big(60_000)}`, '--env', `B=${big(75_000)}`, '--', 'true'], ["environment too large: 135015 bytes of JSON (at most 131072); the largest variable is 'B' (75000 bytes)"]],
    [['stage', '--label', `note=${big(70_000)}`, '--', 'true'], ["labels too large: 70011 bytes of JSON (at most 65536); the largest is 'note' (70000 bytes)"]],
    [['stage', ...Array.from({ length: 101 }, (_, i) => `--label=k${i}=v`), '--', 'true'], ["too many labels: 101, the last 'k100' (at most 100)"]],
    [['stage', '--repeat', '100000', '--', 'echo', big(1000)], ['batch too large: --repeat 100000 of', '(at most 67108864)']],
  ])('fitq %j is refused, staging nothing', async (args, fragments) => {
    await refusedInFreshQueue(args as string[], fragments as string[]);
  });

  it.each([
    ['--priority', '99999999999999999999'],
    ['--priority', 'abc'],
    ['--repeat', '1.5'],
    ['--retries', '1e3'],
  ])('%s %j (not an exact integer) is refused in one line, quoting it as given', async (flag, value) => {
    await refusedInFreshQueue(['stage', flag, value, '--', 'true'], [`expected ${flag} to be an integer`, `got '${value}'`]);
  });

  it('accepts the limits themselves', async () => {
    const queue = newQueue();
    const labels = Array.from({ length: 100 }, (_, i) => `--label=k${i}=v`);
    const result = await fitq(['stage', '--priority=-1000000', '--retries', '100', ...labels, '--env', `A=${big(120_000)}`, '--', big(100_000)], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('staging 100,000 runs at once', () => {
  it('stores them all and lists them all', async () => {
    // A Redis of its own: listing them is one long script call, which would stall every other test's Redis.
    const server = await startRedisServer();
    try {
      const queue = newQueue();
      const env = { FITQ_REDIS_URL: server.url };
      const timeoutMs = 170_000;
      const staged = await fitq(['stage', '--repeat', '100000', '--', 'true'], { queue, env, timeoutMs });
      expect(staged.exitCode, staged.stderr).toBe(0);
      const ids = staged.stdout.split('\n');
      expect(ids).toHaveLength(100_000);
      expect(new Set(ids).size).toBe(100_000);
      const listed = await fitq(['runs', '--status', 'staged', '--all', '--json'], { queue, env, timeoutMs });
      expect(listed.exitCode, listed.stderr).toBe(0);
      const { runs } = JSON.parse(listed.stdout) as { runs: { id: string; status: string }[] };
      expect(runs).toHaveLength(100_000);
      expect(runs.every((run) => run.status === 'staged')).toBe(true);
      expect(new Set(runs.map((run) => run.id))).toEqual(new Set(ids));
    } finally {
      await server.dispose();
    }
  }, 180_000);
});

describe.concurrent('flags and arguments oclif refuses', () => {
  it.each([
    [['stage', '--nosuch', '--', 'true'], ['Nonexistent flag: --nosuch']],
    [['runs', '--status', 'bogus'], ['Expected --status=bogus to be one of: staged']],
    [['runs', 'show'], ['Missing 1 required arg: id']],
    [['worker', '--concurrency', 'two'], ['two']],
    [['stage', '-r', 'a=1', 'echo', 'hi'], ["missing '--' before the command 'echo'"]],
    [['runs', '--queue', ''], ["invalid queue name ''"]],
  ])('fitq %j is one line, exit 2, changing nothing', async (args, fragments) => {
    await refusedInFreshQueue(args, fragments);
  });

  it('a FITQ_PREFIX that could forge keys is refused', async () => {
    await refusedInFreshQueue(['runs'], ["invalid key prefix (FITQ_PREFIX) 'a}b'"], { FITQ_PREFIX: 'a}b' });
  });

  it('labels and variables named like object properties (constructor, __proto__) are plain names', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--label', 'constructor=x', '--label', 'toString=y', '--env', '__proto__=z', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const shown = await fitq(['runs', 'show', staged.stdout.trim(), '--json'], { queue });
    const run = JSON.parse(shown.stdout) as { labels: Record<string, string>; env: Record<string, string> };
    expect(Object.entries(run.labels)).toEqual([['constructor', 'x'], ['toString', 'y']]);
    expect(Object.entries(run.env)).toEqual([['__proto__', 'z']]);
    await refusedInFreshQueue(['stage', '--label', 'constructor=x', '--label', 'constructor=y', '--', 'true'], ["invalid --label 'constructor=y': 'constructor' given twice"]);
  });
});
