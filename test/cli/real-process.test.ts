/**
 * The `fitq` binary as a new user runs it, each command its own process
 * (bin/run.js, oclif's manifest, the exit code the shell sees). Most CLI
 * tests run the same commands in the test's process (support/in-process-cli.ts);
 * these make sure what they test is what the binary does.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, fitqProcess, newQueue } from '../support/fitq.js';

describe('the fitq binary', () => {
  it('stages, runs with a worker, lists, shows output and waits, each a process of its own', async () => {
    const queue = newQueue();
    const staged = await fitqProcess(['stage', '-r', 'cpu=1', '--label', 'sweep=a', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    const ok = (await fitqProcess(['stage', '--after-end', id, '--', 'true'], { queue })).stdout.trim();
    // What the binary sets for oclif while it loads (skipping oclif's own Node check) never reaches a run.
    const env = (await fitqProcess(['stage', '--shell', '--', 'echo "${OCLIF_DISABLE_ENGINE_WARNING-unset}"'], { queue })).stdout.trim();

    const worker = await fitqProcess(['worker', '-r', 'cpu=2', '--run-once', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);

    const runs = await fitqProcess(['runs', '--columns', 'id,status,exit'], { queue });
    expect(runs.exitCode, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`^${id}\\s+failed\\s+3$`, 'm'));
    expect(runs.stdout).toMatch(new RegExp(`^${ok}\\s+completed\\s+0$`, 'm'));

    const logs = await fitqProcess(['logs', id], { queue });
    expect([logs.exitCode, logs.stdout, logs.stderr]).toEqual([0, 'out', 'err']);
    expect((await fitqProcess(['logs', env], { queue })).stdout).toBe('unset');
    // The shell sees the run's own exit code.
    expect((await fitqProcess(['wait', id], { queue })).exitCode).toBe(3);
    expect((await fitqProcess(['wait', ok], { queue })).exitCode).toBe(0);
  });

  it('answers a mistake in one line with exit 2, no stack trace, as in-process calls do', async () => {
    const queue = newQueue();
    for (const args of [['stage', '-r', 'gpu=-1', '--', 'true'], ['runs', 'show', 'nope'], ['stage', '--priorty', '1', '--', 'true'], ['satge']]) {
      const real = await fitqProcess(args, { queue });
      expect(real.exitCode, args.join(' ')).toBe(2);
      expect(real.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(real.stderr).not.toMatch(/\n\s+at /);
      expect(real.stdout).toBe('');
      expect(await fitq(args, { queue }), args.join(' ')).toEqual(real);
    }
    const client = await connectClient(queue);
    expect(await client.listRuns()).toEqual([]);
  });

  it('prints help and its version like any oclif binary', async () => {
    const queue = newQueue();
    const help = await fitqProcess(['--help'], { queue });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('RUN LIFECYCLE');
    expect(await fitq(['--help'], { queue })).toEqual(help);
    const version = await fitqProcess(['--version'], { queue });
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^fitq\/\d+\.\d+\.\d+ /);
  });
});
