/**
 * Words and directories that are not UTF-8. Node decodes them with U+FFFD in
 * place of the bytes, and can only hand UTF-8 on to a run, so fitq would
 * store and run another name: it refuses them instead, in one line showing
 * the bytes (\xNN), exit 2, nothing staged. A U+FFFD really typed is kept.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, fitqBytes, newQueue, startTestWorker, type CliResult } from '../support/fitq.js';

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => Buffer.from(typeof part === 'string' ? part : Uint8Array.from(part))));

function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr).toBe(`Error: ${message}`);
  expect(result.stdout).toBe('');
}

async function expectNothingStaged(queue: string): Promise<void> {
  expect(await (await connectClient(queue)).listRuns()).toEqual([]);
}

const COMMAND_HINT = 'fitq stores commands as UTF-8 text and would run something else: give it in UTF-8, or stage shell text (--shell) that makes these bytes';
const FLAG_HINT = "fitq stores flags' values (labels, --env, --cwd) as UTF-8 text; give it in UTF-8 (for a path, a UTF-8 symlink to it)";

/** A fresh directory holding `d\xe9`, a directory whose name is not UTF-8. */
function nonUtf8Directory(): { base: string; dir: Buffer } {
  const base = mkdtempSync(join(tmpdir(), 'fitq-bytes-'));
  const dir = bytes(`${base}/d`, [0xe9]);
  mkdirSync(dir);
  return { base, dir };
}

describe('arguments that are not UTF-8', () => {
  it('refuses a word of the command, showing its bytes and shell text that makes them', async () => {
    const queue = newQueue();
    const result = await fitqBytes(['stage', '--', 'cat', bytes('caf', [0xe9], '.txt')], { queue });
    expectRefused(result, `argument 'caf\\xe9.txt' is not valid UTF-8: ${COMMAND_HINT}, like "$(printf 'caf\\351.txt')"`);
    await expectNothingStaged(queue);
  });

  it('suggests shell text that makes exactly the bytes typed', async () => {
    const queue = newQueue();
    const word = bytes("it's 100% caf", [0xe9, 0x80], ' \\ "$x"');
    const result = await fitqBytes(['stage', '--shell', '--', 'cat', word], { queue });
    expect(result.exitCode, result.stderr).toBe(2);
    const example = /, like (.*)$/.exec(result.stderr)?.[1];
    expect(example).toBe(`"$(printf 'it\\047s 100\\045 caf\\351\\200 \\134 "$x"')"`);
    const made = await execa('sh', ['-c', `printf %s ${example}`], { encoding: 'buffer' });
    expect(Buffer.from(made.stdout)).toEqual(word);
    await expectNothingStaged(queue);
  });

  it.each([
    [['--label', bytes('team=x', [0xff])], `'team=x\\xff'`],
    [['--env', bytes('NAME=caf', [0xe9])], `'NAME=caf\\xe9'`],
    [[bytes('--env=NAME=', [0xc3])], `'--env=NAME=\\xc3'`],
    [['--run-id', bytes('r', [0xe9])], `'r\\xe9'`],
  ])('refuses a flag value %#, quoting its bytes, and stages nothing', async (words, shown) => {
    const queue = newQueue();
    const result = await fitqBytes(['stage', ...words, '--', 'true'], { queue });
    expectRefused(result, `argument ${shown} is not valid UTF-8: ${FLAG_HINT}`);
    await expectNothingStaged(queue);
  });

  it('refuses a --cwd that is not UTF-8, though the directory exists', async () => {
    const queue = newQueue();
    const { base, dir } = nonUtf8Directory();
    const result = await fitqBytes(['stage', '--cwd', dir, '--', 'true'], { queue });
    expectRefused(result, `argument '${base}/d\\xe9' is not valid UTF-8: ${FLAG_HINT}`);
    await expectNothingStaged(queue);
  });

  it('refuses a --from-file line that is not UTF-8, naming the line', async () => {
    const queue = newQueue();
    const file = join(mkdtempSync(join(tmpdir(), 'fitq-cmds-')), 'cmds.txt');
    writeFileSync(file, bytes('echo one\ncat caf', [0xe9], '.txt\necho three\n'));
    const result = await fitq(['stage', '--from-file', file], { queue });
    expectRefused(
      result,
      `line 2 of --from-file '${file}' is not valid UTF-8: 'cat caf\\xe9.txt'; fitq stores commands as UTF-8 text: write the bytes as shell escapes, like "$(printf '\\351')"`,
    );
    await expectNothingStaged(queue);
  });

  it('refuses such a word for any command', async () => {
    const queue = newQueue();
    const result = await fitqBytes(['runs', 'rm', bytes('ab', [0xe9])], { queue });
    expectRefused(result, "argument 'ab\\xe9' is not valid UTF-8: fitq takes its arguments as UTF-8 text; give it in UTF-8");
  });

  it('keeps a U+FFFD that was typed, as UTF-8', async () => {
    const queue = newQueue();
    const staged = await fitqBytes(['stage', '--label', 'k=v\uFFFD', '--', 'echo', 'caf\uFFFD'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const run = await (await connectClient(queue)).getRun(staged.stdout.trim());
    expect(run).toMatchObject({ command: ['echo', 'caf\uFFFD'], labels: { k: 'v\uFFFD' } });
  });
});

describe('a current directory that is not UTF-8', () => {
  it('refuses to stage from it, with or without a relative --cwd, showing its bytes', async () => {
    const queue = newQueue();
    const { base, dir } = nonUtf8Directory();
    const message = `the current directory '${base}/d\\xe9' is not valid UTF-8, and runs are told their directory as UTF-8 text: give --cwd a UTF-8 path to it, such as a symlink`;
    expectRefused(await fitqBytes(['stage', '--', 'true'], { queue, cwd: dir }), message);
    expectRefused(await fitqBytes(['stage', '--cwd', '.', '--', 'true'], { queue, cwd: dir }), message);
    await expectNothingStaged(queue);
  });

  it('stages from it with --cwd a UTF-8 path to it, and the run starts there', async () => {
    const queue = newQueue();
    const { base, dir } = nonUtf8Directory();
    writeFileSync(Buffer.concat([dir, Buffer.from('/inside')]), '');
    const link = join(base, 'link');
    symlinkSync(dir, link);
    const staged = await fitqBytes(['stage', '--cwd', link, '--', 'ls'], { queue, cwd: dir });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const client = await connectClient(queue);
    expect((await client.getRun(id)).cwd).toBe(link);
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    const output = await client.readLog(id);
    expect(output.flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['inside']);
  });

  it('stages from a directory whose name really holds U+FFFD', async () => {
    const queue = newQueue();
    const dir = join(mkdtempSync(join(tmpdir(), 'fitq-bytes-')), 'd\uFFFD');
    mkdirSync(dir);
    const staged = await fitqBytes(['stage', '--', 'true'], { queue, cwd: Buffer.from(dir) });
    expect(staged.exitCode, staged.stderr).toBe(0);
    expect((await (await connectClient(queue)).getRun(staged.stdout.trim())).cwd).toBe(dir);
  });
});
