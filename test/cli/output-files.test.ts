/**
 * `fitq stage --output/--error/--open-mode` through the real CLI and a real
 * worker: the files get the run's output besides its stored log, with
 * placeholders filled in, relative to the run's directory; a file the
 * worker cannot open ends the run failed with the reason, and the worker
 * goes on. Only a regular file (or /dev/null) is taken, and opening one
 * never blocks the worker: a named pipe nobody reads is refused at once.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { fitq, newQueue, type CliResult } from '../support/fitq.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

const SECRET = { FITQ_SECRET: 'output-files-test-secret' };

describe('fitq stage --output and --error', () => {
  it('writes stdout and stderr to the files (one file without --error), with placeholders, truncating or appending', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-output-'));
    const stage = async (args: string[]) => expectOk(await fitq(['stage', '--cwd', dir, ...args], { queue, env: SECRET })).split('\n');
    const script = 'echo out-1; echo err-1 >&2; sleep 0.1; echo out-2';
    const [both] = await stage(['--output', 'both-{id}.log', '--shell', '--', script]);
    const [apart] = await stage(['--output', 'apart.out', '--error', `${dir}/apart.err`, '--shell', '--', script]);
    writeFileSync(join(dir, 'kept.log'), 'before\n');
    writeFileSync(join(dir, 'cut.log'), 'before\n');
    await stage(['--output', 'kept.log', '--open-mode', 'append', '--', 'echo', 'after']);
    await stage(['--output', 'cut.log', '--', 'echo', 'after']);
    const swept = await stage(['--array', '3-4', '--output', 'a-{array}-{index}.txt', '--', 'echo', '{index}']);
    // More than a file stream takes at once: reading waits for it, nothing is lost.
    await stage(['--output', 'big.txt', '--', 'seq', '1', '50000']);
    // Signed runs: the worker checks the output files are those staged.
    expectOk(await fitq(['worker', '--run-once'], { queue, env: SECRET }));

    const { runs } = JSON.parse(expectOk(await fitq(['runs', '--json'], { queue }))) as { runs: RunRecord[] };
    expect(runs.map((run) => run.status)).toEqual(Array(7).fill('completed'));
    expect(runs[0]!.output).toEqual({ stdout: join(dir, `both-${both}.log`) });
    expect(runs[2]!.output).toEqual({ stdout: join(dir, 'kept.log'), append: true });
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    expect(read(`both-${both}.log`).split('\n').sort()).toEqual(['', 'err-1', 'out-1', 'out-2']);
    expect(read('apart.out')).toBe('out-1\nout-2\n');
    expect(read('apart.err')).toBe('err-1\n');
    expect(read('kept.log')).toBe('before\nafter\n');
    expect(read('cut.log')).toBe('after\n');
    const arrayId = runs[4]!.array!;
    expect([read(`a-${arrayId}-3.txt`), read(`a-${arrayId}-4.txt`)]).toEqual(['3\n', '4\n']);
    expect(read('big.txt')).toBe(`${Array.from({ length: 50_000 }, (_, i) => i + 1).join('\n')}\n`);
    // Still in fitq's own log too.
    expect(expectOk(await fitq(['logs', apart!], { queue }))).toBe('out-1\nout-2');
    expect(swept).toHaveLength(2);
  });

  it('ends a run whose file cannot be opened failed, with the reason, and runs the next', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-output-'));
    const [broken] = expectOk(await fitq(['stage', '--cwd', dir, '--output', 'missing/out.log', '--', 'echo', 'never'], { queue })).split('\n');
    const [errOnly] = expectOk(await fitq(['stage', '--cwd', dir, '--output', 'ok.log', '--error', dir, '--', 'echo', 'never'], { queue })).split('\n');
    const [fine] = expectOk(await fitq(['stage', '--cwd', dir, '--', 'echo', 'fine'], { queue })).split('\n');
    expectOk(await fitq(['worker', '--run-once'], { queue }));
    const { runs } = JSON.parse(expectOk(await fitq(['runs', '--json'], { queue }))) as { runs: RunRecord[] };
    expect(runs.map((run) => [run.id, run.status, run.reason])).toEqual([
      [broken, 'failed', `cannot open --output file ${join(dir, 'missing/out.log')}: no such directory`],
      [errOnly, 'failed', `cannot open --error file ${dir}: it is a directory`],
      [fine, 'completed', 'exit code 0'],
    ]);
    const refused = await fitq(['stage', '--error', 'e.log', '--', 'true'], { queue });
    expect(refused).toMatchObject({ exitCode: 2, stderr: "Error: --error 'e.log' needs --output too (the file for stdout)" });
    const unknown = await fitq(['stage', '--output', 'o-{index}.log', '--', 'true'], { queue });
    expect(unknown).toMatchObject({ exitCode: 2, stderr: "Error: unknown placeholder '{index}' in --output 'o-{index}.log': use {id}" });
  });

  it('refuses a named pipe (with a reader or none) at once, takes /dev/null, and the worker never blocks on one', async () => {
    const queue = newQueue();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-output-'));
    const fifo = join(dir, 'pipe');
    const read = join(dir, 'read-pipe');
    execFileSync('mkfifo', [fifo, read]);
    // Someone reads this one: it is still no regular file.
    const reader = createReadStream(read);
    reader.on('error', () => {});
    try {
      const stage = async (args: string[]) => expectOk(await fitq(['stage', '--cwd', dir, ...args], { queue })).split('\n')[0]!;
      const noReader = await stage(['--output', 'pipe', '--', 'echo', 'never']);
      const withReader = await stage(['--output', 'out.log', '--error', 'read-pipe', '--', 'echo', 'never']);
      const devNull = await stage(['--output', '/dev/null', '--', 'echo', 'gone']);
      const fine = await stage(['--', 'echo', 'fine']);
      expectOk(await fitq(['worker', '--run-once', '--concurrency', '1'], { queue, timeoutMs: 60_000 }));
      const { runs } = JSON.parse(expectOk(await fitq(['runs', '--json'], { queue }))) as { runs: RunRecord[] };
      expect(runs.map((run) => [run.id, run.status, run.reason])).toEqual([
        [noReader, 'failed', `cannot open --output file ${fifo}: it is a named pipe (FIFO) with no reader: give a regular file`],
        [withReader, 'failed', `cannot open --error file ${read}: it is a named pipe (FIFO): give a regular file`],
        [devNull, 'completed', 'exit code 0'],
        [fine, 'completed', 'exit code 0'],
      ]);
    } finally {
      reader.destroy();
    }
  });
});
