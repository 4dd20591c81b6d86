/**
 * Runs that cannot start, and runs whose output is huge, binary or not UTF-8,
 * on real CLI workers against the test Redis: a run that cannot start fails
 * with the reason and the worker carries on; output is kept bounded in Redis,
 * shown safely by `fitq logs`, and the worker's memory stays bounded.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { DEFAULT_LOG_MAX_LINES } from '../../src/model/logs.js';
import { Scripts } from '../../src/queue/scripts.js';
import { MAX_LINE_CHARS } from '../../src/worker/line-splitter.js';
import { OutputBuffer } from '../../src/worker/output.js';
import { BIN, connectClient, fitq, messages, newQueue, parseJsonLog, redisUrl } from '../support/fitq.js';

/** Entries the log stream keeps: the last 10,000 lines, plus what approximate trimming leaves, plus the end marker. */
const MIN_KEPT = 10_000;
const MAX_KEPT = 10_200;

async function stage(client: FitqClient, command: string[], options: { shell?: boolean; cwd?: string } = {}): Promise<string> {
  return (await client.stage({ command, ...options })).runs[0]!.id;
}

/** Runs a CLI worker until no staged run is left; returns its JSON log messages. */
async function runCliWorker(queue: string, name: string): Promise<string[]> {
  const result = await fitq(['worker', '--run-once', '--concurrency', '1', '--name', name, '--log-format', 'json'], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return messages(parseJsonLog(result.stdout));
}

/** The lines of a run's log stream, as stored. */
async function storedLines(client: FitqClient, id: string): Promise<string[]> {
  return (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
}

/** `fitq logs ID` with its raw bytes, to check they are valid UTF-8. */
async function rawLogs(queue: string, id: string): Promise<{ exitCode: number; stdout: Buffer; stderr: string }> {
  const result = await execa('node', [BIN, 'logs', id], {
    env: { FITQ_REDIS_URL: redisUrl(), FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
    encoding: 'buffer',
    reject: false,
    stripFinalNewline: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: Buffer.from(result.stdout), stderr: Buffer.from(result.stderr).toString() };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Numbers from `from` to `to`, as `seq` prints them with the given width (zero-padded). */
const numbers = (from: number, to: number, width = 0) =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i).padStart(width, '0'));

describe('runs whose command cannot start', () => {
  it('end failed with the reason, and the same CLI worker completes the run after each', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-nostart-'));
    const notExecutable = join(dir, 'not-executable.sh');
    writeFileSync(notExecutable, 'echo hi\n', { mode: 0o644 });
    const badInterpreter = join(dir, 'bad-interpreter.sh');
    writeFileSync(badInterpreter, '#!/no/such/interpreter-fitq\necho hi\n');
    chmodSync(badInterpreter, 0o755);
    const crlf = join(dir, 'crlf.sh');
    writeFileSync(crlf, '#!/bin/sh\r\necho hi\r\n');
    chmodSync(crlf, 0o755);
    mkdirSync(join(dir, 'sub'));
    const failing: [string[], string][] = [
      [['nosuchcmd-fitq', '--flag'], 'command not found: nosuchcmd-fitq'],
      [[join(dir, 'missing-script')], `command not found: ${join(dir, 'missing-script')}`],
      [[notExecutable], `permission denied: ${notExecutable}`],
      [[dir], `is a directory: ${dir}`],
      [['./sub'], 'is a directory: ./sub'],
      [[badInterpreter], `bad interpreter: ${badInterpreter} (/no/such/interpreter-fitq not found)`],
      [[crlf], `bad interpreter: ${crlf} (/bin/sh\\r not found)`],
    ];
    const staged: { bad: string; reason: string; good: string }[] = [];
    for (const [index, [command, reason]] of failing.entries()) {
      const bad = await stage(client, command, { cwd: dir });
      const good = await stage(client, ['sh', '-c', `echo good-${index}`]);
      staged.push({ bad, reason, good });
    }
    const logs = await runCliWorker(queue, 'nostart');
    for (const [index, { bad, reason, good }] of staged.entries()) {
      expect(await client.getRun(bad)).toMatchObject({ status: 'failed', worker: 'nostart', reason });
      expect(logs).toContain(`Run ${bad} failed (${reason})`);
      expect(await client.getRun(good)).toMatchObject({ status: 'completed', worker: 'nostart', exitCode: 0 });
      expect(await storedLines(client, good)).toEqual([`good-${index}`]);
    }
    // In staging order: each failure is followed by the next run.
    const ended = logs.filter((message) => / (completed|failed)/.test(message)).map((message) => message.split(' ')[1]);
    expect(ended).toEqual(staged.flatMap(({ bad, good }) => [bad, good]));
  });
});

describe('huge, binary and non-UTF-8 output', () => {
  it('200,000 lines: the log stream stays bounded and keeps the last 10,000 lines at least, in order', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(client, ['seq', '1', '200000']);
    await runCliWorker(queue, 'lines');
    expect(await client.getRun(id)).toMatchObject({ status: 'completed' });
    const length = await client.redis.xlen(client.keys.runLog(id));
    expect(length).toBeGreaterThanOrEqual(MIN_KEPT);
    expect(length).toBeLessThanOrEqual(MAX_KEPT);
    const printed = await fitq(['logs', id], { queue });
    expect(printed.exitCode, printed.stderr).toBe(0);
    const lines = printed.stdout.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(MIN_KEPT);
    expect(lines.slice(-MIN_KEPT)).toEqual(numbers(200_000 - MIN_KEPT + 1, 200_000));
  });

  it("lines a worker drops while Redis takes a run's output slower than it comes are counted exactly, one note for each gap", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, DEFAULT_LOG_MAX_LINES);
    expect(await scripts.registerWorker({ name: 'slow', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: '' })).toBe(true);
    const id = await stage(client, ['true']);
    const claim = await scripts.claimRun('slow', 'tok', 0);
    if (claim.code !== 'claimed') throw new Error(`not claimed: ${claim.code}`);
    const errors: unknown[] = [];
    const output = new OutputBuffer(scripts, id, 'slow', 'tok', claim.epoch, DEFAULT_LOG_MAX_LINES, (error) => errors.push(error));
    // 2,000 lines of 10,000 characters at once, faster than any Redis takes them: more than the 8 MiB a run may have waiting.
    for (let i = 1; i <= 2000; i++) output.add({ stream: 'stdout', line: String(i).padEnd(10_000, '.') });
    await output.flush();
    expect(errors).toEqual([]);
    await scripts.finishRun({ runId: id, worker: 'slow', token: 'tok', epoch: claim.epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' });
    await scripts.deregisterWorker('slow', 'tok');

    const printed = await fitq(['logs', id], { queue });
    expect(printed.exitCode, printed.stderr).toBe(0);
    // Stored lines in order, with gaps; a note on stderr for each gap, counting its lines exactly.
    const gaps: number[] = [];
    let next = 1;
    for (const line of printed.stdout.split('\n')) {
      const number = Number.parseInt(line, 10);
      expect(line).toBe(String(number).padEnd(10_000, '.'));
      expect(number).toBeGreaterThanOrEqual(next);
      if (number > next) gaps.push(number - next);
      next = number + 1;
    }
    expect(next).toBe(2001);
    expect(gaps.length).toBeGreaterThan(0);
    expect(printed.stderr.split('\n')).toEqual(
      gaps.map((count) => `[fitq: ${count} lines dropped while Redis was slow: more of the run's output waited to be stored than its worker keeps]`),
    );
  });

  it('a single 10 MB line without a newline is kept in pieces of at most 16,384 characters', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(client, ["head -c 10485760 /dev/zero | tr '\\0' x"], { shell: true });
    await runCliWorker(queue, 'longline');
    expect(await client.getRun(id)).toMatchObject({ status: 'completed' });
    const lines = await storedLines(client, id);
    expect(lines).toHaveLength(10_485_760 / MAX_LINE_CHARS);
    expect(lines.every((line) => line.length === MAX_LINE_CHARS && /^x+$/.test(line))).toBe(true);
    expect(await client.redis.xlen(client.keys.runLog(id))).toBe(lines.length + 1);
    const printed = await rawLogs(queue, id);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout.length).toBe(10_485_760 + lines.length);
  });

  it('random bytes with NULs and bytes that are not UTF-8: stored bounded, printed as valid UTF-8 with U+FFFD', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const script = "printf 'nul:\\000:end\\n'; printf 'caf\\351 \\377\\376 ok\\n'; head -c 1000000 /dev/urandom; printf '\\nlast\\n'";
    const id = await stage(client, [script], { shell: true });
    await runCliWorker(queue, 'binary');
    expect(await client.getRun(id)).toMatchObject({ status: 'completed' });
    const lines = await storedLines(client, id);
    expect(lines.length).toBeLessThanOrEqual(MAX_KEPT);
    expect(lines.every((line) => line.length <= MAX_LINE_CHARS)).toBe(true);
    expect(lines.slice(0, 2)).toEqual(['nul:\0:end', 'caf\uFFFD \uFFFD\uFFFD ok']);
    expect(lines[lines.length - 1]).toBe('last');
    const printed = await rawLogs(queue, id);
    expect(printed.exitCode, printed.stderr).toBe(0);
    const text = strictUtf8.decode(printed.stdout); // throws if not UTF-8
    expect(text.startsWith('nul:\0:end\ncaf\uFFFD \uFFFD\uFFFD ok\n')).toBe(true);
    expect(text.endsWith('\nlast\n')).toBe(true);
  });

  it('bytes that are not UTF-8 written into a log by anyone else are printed with U+FFFD', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = await stage(client, ['true']);
    await client.redis.xadd(client.keys.runLog(id), '*', 'stream', 'stdout', 'line', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0xff, 0x00, 0x41]));
    const printed = await rawLogs(queue, id);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(strictUtf8.decode(printed.stdout)).toBe('caf\uFFFD\uFFFD\0A\n');
  });

  it('a run printing 200 MB: the CLI worker stays under 300 MB of memory and keeps its last 10,000 lines, or counts those it dropped', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // 200,000 lines of 1,000 bytes: the number, zero-padded to 999 characters.
    const id = await stage(client, ['seq', '-f', '%0999g', '1', '200000']);
    const worker = spawn('node', [BIN, 'worker', '--name', 'rss', '--concurrency', '1'], {
      env: {
        ...process.env,
        FITQ_REDIS_URL: redisUrl(),
        FITQ_QUEUE: queue,
        FITQ_PREFIX: process.env.FITQ_PREFIX ?? '',
        XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'fitq-config-')),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    worker.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    try {
      const run = await client.waitForEnd(id);
      expect(run, stderr).toMatchObject({ status: 'completed', worker: 'rss' });
      // The worker is still running: its peak resident set so far.
      const status = readFileSync(`/proc/${worker.pid}/status`, 'utf8');
      const peakKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]);
      expect(peakKb).toBeGreaterThan(0);
      expect(peakKb).toBeLessThan(300 * 1024);
      const length = await client.redis.xlen(client.keys.runLog(id));
      expect(length).toBeGreaterThanOrEqual(MIN_KEPT);
      expect(length).toBeLessThanOrEqual(MAX_KEPT);
      const lines = await storedLines(client, id);
      expect(lines.every((line) => line.length === 999)).toBe(true);
      // In order to the last line; where Redis took them slower than they came (a loaded machine), the
      // lines the worker dropped are counted on the line after them: none missing unsaid.
      const entries = (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry] : []));
      let next: number | undefined;
      const gaps: { before: number; dropped: number; counted: number }[] = [];
      for (const entry of entries) {
        const number = Number(entry.line);
        const counted = (entry.slow ?? 0) + (entry.refused ?? 0);
        if (next !== undefined && number !== next + counted) gaps.push({ before: number, dropped: number - next, counted });
        next = number + 1;
      }
      expect(gaps).toEqual([]);
      expect(next).toBe(200_001);
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) {
        worker.kill('SIGKILL');
        await exited;
      }
    }
  }, 60_000);
});
