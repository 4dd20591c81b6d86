import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

describe('fitq stage', () => {
  it('prints one id per staged run and stores every field', async () => {
    const queue = newQueue();
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'fitq-cwd-')));
    const result = await fitq(
      ['stage', '-r', 'foo=1,bar=0.5', '--priority', '3', '--label', 'team=vision', '--label', 'note=a b',
        '--env', 'LR=0.1', '--cwd', dir, '--repeat', '3', '--', 'python', 'train.py', '--lr', '0.1'],
      { queue },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const ids = result.stdout.trim().split('\n');
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    const client = await connectClient(queue);
    const run = await client.getRun(ids[0]!);
    expect(run).toMatchObject({
      id: ids[0],
      status: 'staged',
      command: ['python', 'train.py', '--lr', '0.1'],
      shell: false,
      cwd: dir,
      env: { LR: '0.1' },
      resources: { bar: 0.5, foo: 1 },
      priority: 3,
      labels: { team: 'vision', note: 'a b' },
    });
    expect(run.stagedAt).toBeGreaterThan(0);
  });

  it('--json prints the staged run records', async () => {
    const queue = newQueue();
    const result = await fitq(['stage', '--json', '--run-id', 'my-run.1', '-r', 'mem=8Gi', '--', 'echo', 'hi'], { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    const runs = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: 'my-run.1', status: 'staged', resources: { mem: 8589934592 }, command: ['echo', 'hi'] });
  });

  it('refuses a run id that is taken, staging nothing', async () => {
    const queue = newQueue();
    expect((await fitq(['stage', '--run-id', 'aaa', '--', 'true'], { queue })).exitCode).toBe(0);
    const again = await fitq(['stage', '--run-id', 'aaa', '--', 'false'], { queue });
    expect(again.exitCode).toBe(2);
    expect(again.stderr.trim()).toBe("Error: run id 'aaa' is already taken");
    const client = await connectClient(queue);
    expect((await client.listRuns()).map((run) => run.command)).toEqual([['true']]);
  });

  it.each([
    [['stage', 'echo', 'hi'], "missing '--' before the command 'echo'"],
    [['stage', '--'], 'missing command'],
    [['stage', '--run-id', 'a b', '--', 'true'], "invalid run id 'a b'"],
    [['stage', '--run-id', 'x:{y}', '--', 'true'], "invalid run id 'x:{y}'"],
    [['stage', '--cwd', '/no/such/dir', '--', 'true'], "--cwd '/no/such/dir' does not exist"],
    [['stage', '--label', 'novalue', '--', 'true'], "invalid --label 'novalue': expected KEY=VALUE"],
    [['stage', '--env', '1X=2', '--', 'true'], "invalid environment variable name '1X'"],
    [['stage', '--priority', '2000000', '--', 'true'], "expected --priority to be an integer from -1000000 to 1000000, got '2000000'"],
    [['stage', '--repeat', '0', '--', 'true'], "expected --repeat to be an integer from 1 to 100000, got '0'"],
    [['stage', '--queue', 'a{b}', '--', 'true'], "invalid queue name 'a{b}'"],
  ])('refuses %j with a clear error and exit 2', async (args, message) => {
    const queue = newQueue();
    const result = await fitq(args, { queue });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('    at ');
    const client = await connectClient(queue);
    expect(await client.listRuns()).toEqual([]);
  });

  it('warns when no live worker could ever run the run, and stages it anyway', async () => {
    const queue = newQueue();
    const result = await fitq(['stage', '-r', 'gpu=1', '--', 'true'], { queue });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`Warning: run ${result.stdout.trim()} staged, but no live worker can run it yet: no live worker`);
    const client = await connectClient(queue);
    expect((await client.getRun(result.stdout.trim())).status).toBe('staged');
  });
});

describe('fitq worker option errors', () => {
  it.each([
    [['worker', '--lease', '0.1'], {}, "expected --lease to be between 0.3 and 2147483 seconds, got '0.1'"],
    [['worker', '--kill-grace', '1e10'], {}, "expected --kill-grace to be between 0 and 2147483 seconds, got '10000000000'"],
    [['worker', '--name', 'a:b'], {}, "invalid worker name 'a:b'"],
    [['worker'], { FITQ_LOG_LEVEL: 'loud' }, "expected FITQ_LOG_LEVEL to be one of fatal, error, warn, info, debug, trace, silent, got 'loud'"],
  ])('refuses %j with exit 2', async (args, env, message) => {
    const result = await fitq(args, { queue: newQueue(), env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr.trim()).toContain(`Error: ${message}`);
  });
});
