/**
 * Shell completion in a real bash: the script `fitq completion bash` prints
 * is sourced, and bash's own completion variables (COMP_WORDS, COMP_CWORD)
 * are set as bash sets them on TAB; the completion function fills
 * COMPREPLY by running the real `fitq` (on PATH), which reads run ids,
 * worker names and namespaces from a real Redis. Redis being away
 * completes nothing from it, and says nothing. In a real fish, whose
 * `complete -C` completes a command line as TAB does; in a real zsh, after
 * compinit, with the words and cursor zsh's completion sets (compadd, which
 * works only inside a completion widget, prints what it is given).
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { BIN, cliEnv, connectClient, fitqOk, newQueue, redisUrl } from '../support/fitq.js';

/** A directory with a `fitq` that runs this checkout's CLI, for PATH. */
function fitqOnPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-completion-'));
  writeFileSync(join(dir, 'fitq'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  chmodSync(join(dir, 'fitq'), 0o755);
  return dir;
}

/** What bash completes `fitq WORDS…` with (the last word being completed), one candidate per line, and what it printed on stderr. */
async function tab(queue: string, line: string[], env: Record<string, string> = {}): Promise<{ candidates: string[]; stderr: string }> {
  const words = ['fitq', ...line].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(' ');
  const script = `eval "$(fitq completion bash)"
COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMP_LINE="\${COMP_WORDS[*]}"; COMP_POINT=\${#COMP_LINE}
_fitq_complete fitq
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = await execa('bash', ['--norc', '--noprofile', '-c', script], {
    env: { ...cliEnv(queue, env), PATH: `${fitqOnPath()}:${process.env.PATH ?? ''}`, HOME: tmpdir() },
    reject: false,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return { candidates: result.stdout.split('\n').filter((word) => word !== ''), stderr: result.stderr };
}

/** A shell's run with `fitq` on PATH and the test's namespace; fails the test on a non-zero exit. */
async function inShell(shell: string, args: string[], queue: string): Promise<string[]> {
  const result = await execa(shell, args, { env: { ...cliEnv(queue), PATH: `${fitqOnPath()}:${process.env.PATH ?? ''}`, HOME: mkdtempSync(join(tmpdir(), 'fitq-home-')) }, reject: false });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.split('\n').filter((word) => word !== '');
}

/** What fish completes a command line with (its first column: fish adds descriptions after a tab). */
async function fishTab(queue: string, line: string): Promise<string[]> {
  const words = await inShell('fish', ['--no-config', '-c', `fitq completion fish | source; complete -C ${JSON.stringify(line)}`], queue);
  // (In its own order: sorted here.)
  return words.map((word) => word.split('\t')[0]!).sort();
}

/** What zsh completes `fitq WORDS…` with, as its completion system calls the function compdef registered. */
async function zshTab(queue: string, line: string[]): Promise<string[]> {
  const words = ['fitq', ...line].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(' ');
  const script = `autoload -U compinit && compinit -u -D
eval "$(fitq completion zsh)"
compadd() { print -l -- "\${(@P)2}" }
words=(${words}); CURRENT=\${#words}
\${_comps[fitq]}`;
  return inShell('zsh', ['-f', '-c', script], queue);
}

describe('shell completion (fish, zsh)', () => {
  it('completes commands, flags and run ids in fish and zsh as in bash', async () => {
    const queue = newQueue();
    const id = await fitqOk(queue, ['stage', '--hold', '--', 'true']);
    expect(await fishTab(queue, 'fitq ca')).toEqual(['cancel']);
    expect(await fishTab(queue, 'fitq runs ')).toEqual(['clean', 'rm', 'show']);
    expect(await fishTab(queue, 'fitq stage --pre')).toEqual(['--preempt-after', '--preempt-signal', '--preemptible']);
    expect(await fishTab(queue, 'fitq release ')).toEqual([id]);
    expect(await zshTab(queue, ['ca'])).toEqual(['cancel']);
    expect(await zshTab(queue, ['runs', ''])).toEqual(['clean', 'rm', 'show']);
    expect(await zshTab(queue, ['release', id.slice(0, 4)])).toEqual([id]);
    await fitqOk(queue, ['runs', 'rm', id]);
  });
});

describe('shell completion (bash)', () => {
  it('completes commands, subcommands and flags, from the commands themselves', async () => {
    const queue = newQueue();
    expect((await tab(queue, ['ca'])).candidates).toEqual(['cancel']);
    expect((await tab(queue, ['runs', ''])).candidates).toEqual(['clean', 'rm', 'show']);
    expect((await tab(queue, ['stage', '--pre'])).candidates).toEqual(['--preempt-after', '--preempt-signal', '--preemptible']);
    expect((await tab(queue, ['keys', 'add', '--a'])).candidates).toEqual(['--admin']);
    expect((await tab(queue, ['completion', ''])).candidates).toEqual(['bash', 'fish', 'zsh']);
    // The hidden command behind it is never offered.
    expect((await tab(queue, ['complet'])).candidates).toEqual(['completion']);
  });

  it('completes run ids, worker names and namespaces from Redis; nothing, silently, when Redis is away', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const first = await fitqOk(queue, ['stage', '--hold', '--', 'true']);
    const second = await fitqOk(queue, ['stage', '--hold', '--', 'true']);
    expect((await tab(queue, ['cancel', ''])).candidates).toEqual([first, second].sort());
    expect((await tab(queue, ['runs', 'show', second.slice(0, 3)])).candidates).toEqual([second, ...(first.startsWith(second.slice(0, 3)) ? [first] : [])].sort());
    // Namespaces come from a SCAN of at most 10,000 keys: in a database of their own here (the test Redis holds every test's keys).
    const own = { FITQ_REDIS_URL: `${redisUrl()}/13` };
    const elsewhere = await fitqOk(queue, ['stage', '--hold', '--', 'true'], own);
    expect((await tab(queue, ['runs', '--queue', queue.slice(0, -1)], own)).candidates).toEqual([queue]);
    await fitqOk(queue, ['runs', 'rm', elsewhere], own);
    // Another namespace named in the words: its runs, not this one's.
    expect((await tab(queue, ['--queue', newQueue(), 'release', ''])).candidates).toEqual([]);

    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'gpu-box-1']);
    expect(await client.waitForWorkers((workers) => workers.some((w) => w.name === 'gpu-box-1'), 30_000)).toBe(true);
    expect((await tab(queue, ['drain', 'gpu'])).candidates).toEqual(['gpu-box-1']);

    expect(await tab(queue, ['cancel', ''], { FITQ_REDIS_URL: 'redis://127.0.0.1:1' })).toEqual({ candidates: [], stderr: '' });
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    await client.close();
  });
});
