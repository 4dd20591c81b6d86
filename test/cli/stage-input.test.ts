/**
 * What `fitq stage` does with the words it is given: -r, --label and --env
 * take every word up to the next flag or `--` (as `fitq worker -r` does),
 * nothing before `--` is ignored, and --from-file stages many commands in one
 * batch. Also the warning for shell text staged without --shell.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, parseJsonLog, startTestWorker, type CliResult } from '../support/fitq.js';

const STAGE_USAGE = 'fitq stage [FLAGS] -- COMMAND [ARGS...]';

function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr).toBe(`Error: ${message}`);
  expect(result.stdout).toBe('');
}

function tempFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fitq-cmds-')), 'cmds.txt');
  writeFileSync(path, text);
  return path;
}

describe('fitq stage: words before --', () => {
  it('takes `-r gpu=1 mem=8G` as two demands, exactly as the worker takes its -r', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--json', '-r', 'gpu=1', 'mem=8G', '--', 'echo', 'hi'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const [run] = JSON.parse(staged.stdout) as { id: string; requires: string; resources: Record<string, number> }[];
    expect(run!.requires).toBe('gpu=1 mem=8G');
    expect(run!.resources).toEqual({ gpu: 1, mem: 8_000_000_000 });
    // A worker given the same words has exactly that capacity, and runs it.
    const worker = await fitq(['worker', '-r', 'gpu=1', 'mem=8G', '--run-once', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);
    const log = parseJsonLog(worker.stdout).map((entry) => String(entry.msg));
    expect(log).toContain('Worker resources: gpu=1 mem=8G');
    expect(log).toContain(`Run ${run!.id} completed`);
  });

  it('takes every KEY=VALUE after --label and --env', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--label', 'a=b', 'c=d', '--env', 'A=1', 'B=2', '-r', 'x=1', 'y=2', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const client = await connectClient(queue);
    expect(await client.getRun(staged.stdout.trim())).toMatchObject({
      labels: { a: 'b', c: 'd' },
      env: { A: '1', B: '2' },
      resources: { x: 1, y: 2 },
    });
  });

  it.each([
    [['-r', 'gpu=1', 'foo', '--', 'echo', 'hi'], "invalid resource spec 'foo': expected NAME=VALUE"],
    [['--label', 'a=b', 'c', '--', 'true'], "invalid --label 'c': expected KEY=VALUE"],
    [['--env', 'A=1', 'B', '--', 'true'], "invalid --env 'B': expected KEY=VALUE"],
    [['--shell', 'foo', '--', 'true'], `unexpected argument 'foo': no flag takes it (${STAGE_USAGE})`],
    [['--priority', '1', 'foo', '--', 'true'], `unexpected argument 'foo': no flag takes it (${STAGE_USAGE})`],
    [['foo', '--', 'true'], `unexpected argument 'foo': no flag takes it (${STAGE_USAGE})`],
    [['-r', 'gpu=1', 'python', 'train.py'], `missing '--' before the command 'python': ${STAGE_USAGE}`],
    [['--env', 'A=1', 'make'], `missing '--' before the command 'make': ${STAGE_USAGE}`],
    [['-r', 'gpu=1', 'python', 'train.py', '--lr', '0.1'], `Nonexistent flag: --lr; put '--' before the command: ${STAGE_USAGE}`],
    [['-r', 'gpu=1', '--label', 'k=v'], `missing command: ${STAGE_USAGE}`],
    [['-r', '--', 'echo'], 'Flag --resources expects a value'],
  ])('refuses stage %j, naming what no flag takes, and stages nothing', async (args, message) => {
    const queue = newQueue();
    expectRefused(await fitq(['stage', ...args], { queue }), message);
    expect(await (await connectClient(queue)).listRuns()).toEqual([]);
  });
});

describe('fitq stage: shell text without --shell', () => {
  it('warns that a quoted pipeline looks like a shell command, and stages it anyway', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--', 'echo hi | tr a-z A-Z'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    expect(staged.stderr).toContain(
      "Warning: 'echo hi | tr a-z A-Z' looks like a shell command (its first word holds spaces) but runs with no shell; stage it with --shell",
    );
    const client = await connectClient(queue);
    expect(await client.getRun(staged.stdout.trim())).toMatchObject({ status: 'staged', command: ['echo hi | tr a-z A-Z'], shell: false });
  });

  it('does not warn for ordinary argv or with --shell', async () => {
    const queue = newQueue();
    for (const args of [['--', 'grep', '-E', 'a|b', 'file'], ['--shell', '--', 'echo hi | tr a-z A-Z']]) {
      const staged = await fitq(['stage', ...args], { queue });
      expect(staged.exitCode, staged.stderr).toBe(0);
      expect(staged.stderr).not.toContain('looks like a shell command');
    }
  });
});

describe('fitq stage --from-file', () => {
  it('stages one shell command per line in one batch, skipping blank lines and comments', async () => {
    const queue = newQueue();
    const lines = Array.from({ length: 20 }, (_, i) => `echo run-${i} | tr a-z A-Z`);
    const file = tempFile(`# a sweep\n\n${lines.slice(0, 10).join('\n')}\n   \n  # more\n${lines.slice(10).join('\r\n')}\n`);
    const staged = await fitq(['stage', '-r', 'foo=1', '--label', 'sweep=a', '--from-file', file], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const ids = staged.stdout.trim().split('\n');
    expect(ids).toHaveLength(20);
    const client = await connectClient(queue);
    const runs = await client.listRuns();
    expect(runs.map((run) => run.id)).toEqual(ids);
    expect(runs.map((run) => run.command)).toEqual(lines.map((line) => [line]));
    for (const run of runs) expect(run).toMatchObject({ shell: true, resources: { foo: 1 }, labels: { sweep: 'a' } });
    // One batch: one staging time for all.
    expect(new Set(runs.map((run) => run.stagedAt)).size).toBe(1);
    // Each line runs with sh -c.
    const { worker } = await startTestWorker(queue, { resources: 'foo=1', runOnce: true });
    await worker.done;
    const output = await client.readLog(ids[7]!);
    expect(output.flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['RUN-7']);
  });

  it('reads the commands from stdin with --from-file -', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--json', '--from-file', '-'], { queue, input: 'make a\nmake b && make c\n' });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runs = JSON.parse(staged.stdout) as { command: string[]; shell: boolean }[];
    expect(runs.map((run) => [run.command, run.shell])).toEqual([
      [['make a'], true],
      [['make b && make c'], true],
    ]);
  });

  it('stages all the lines or none', async () => {
    const queue = newQueue();
    const file = tempFile(`echo one\necho ${'x'.repeat(140_000)}\necho three\n`);
    const result = await fitq(['stage', '--from-file', file], { queue });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^Error: command too large: /);
    expect(await (await connectClient(queue)).listRuns()).toEqual([]);
  });

  it.each([
    [() => ['--from-file', tempFile('\n# only a comment\n   \n')], (file: string) => `no commands in --from-file '${file}': give one shell command per line (blank lines and # comments are skipped)`],
    [() => ['--from-file', '/no/such/cmds.txt'], () => "cannot read --from-file '/no/such/cmds.txt': no such file"],
    [() => ['--from-file', tempFile('true\n'), '--', 'echo', 'hi'], (file: string) => `give the command after '--' or --from-file '${file}', not both`],
    [() => ['--from-file', tempFile('true\n'), '--run-id', 'r1'], () => "--run-id 'r1' names one run: it does not go with --from-file"],
  ])('refuses a bad --from-file (%#), staging nothing', async (args, message) => {
    const queue = newQueue();
    const words = args();
    expectRefused(await fitq(['stage', ...words], { queue }), message(words[1]!));
    expect(await (await connectClient(queue)).listRuns()).toEqual([]);
  });
});

describe('fitq stage: many arguments', () => {
  const words = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i));
  // oclif's parser takes time quadratic in the words it is given (40,000 took 16 s and more): 100,000 words are
  // refused by fitq's own bounds, before any parser sees them, whichever way they are given.
  it.each([
    // No '--': every word would go to the flag parser.
    ['no --', ['echo', ...words(100_000, (i) => `a${i}`)], "too many arguments with no '--': 100001 given"],
    // Values of a flag that takes every word up to the next flag.
    ['-r values', ['-r', ...words(100_000, (i) => `r${i}=1`), '--', 'true'], "too many arguments before '--': 100001 given"],
    // The command after '--' never goes through the parser: it is too large to stage.
    ['after --', ['--', 'echo', ...words(100_000, (i) => `a${i}`)], 'command too large: '],
  ])('refuses 100,000 words (%s) by its own bounds, in one line', { timeout: 180_000 }, async (_shape, args, refusal) => {
    const queue = newQueue();
    const result = await fitq(['stage', ...args], { queue, timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`Error: ${refusal}`);
  });

  it.each([
    [['-r', ...words(1001, (i) => `r${i}=1`), '--', 'true'], `too many arguments before '--': 1002 given, at most 1000 (flags and their values): ${STAGE_USAGE}`],
    [['--label', 'a=b', ...words(999, (i) => `--env=E${i}=1`), '--', 'true'], `too many arguments before '--': 1001 given, at most 1000 (flags and their values): ${STAGE_USAGE}`],
    [
      ['python', ...words(1000, (i) => `a${i}`)],
      `too many arguments with no '--': 1001 given, at most 1000 before it (flags and their values); put the command after '--': ${STAGE_USAGE}`,
    ],
  ])('refuses more than 1,000 words before -- in one line naming the limit and the count (%#), staging nothing', async (args, message) => {
    const queue = newQueue();
    expectRefused(await fitq(['stage', ...args], { queue }), message);
    expect(await (await connectClient(queue)).listRuns()).toEqual([]);
  });

  it('takes 1,000 words before --', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--env', ...words(999, (i) => `E${i}=1`), '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    expect(Object.keys((await (await connectClient(queue)).getRun(staged.stdout.trim())).env)).toHaveLength(999);
  });

  it('refuses a command too large before connecting to Redis', async () => {
    const args = ['--', 'echo', ...words(100_000, (i) => `a${i}`)];
    // Redis is unreachable: the refusal comes first, exit 2, not the connection error's exit 1.
    const result = await fitq(['stage', '--redis-url', 'redis://127.0.0.1:1', ...args], { queue: newQueue() });
    expectRefused(result, "command too large: 888898 bytes of JSON (at most 131072), 100001 arguments starting with 'echo'");
  });
});
