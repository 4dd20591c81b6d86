/**
 * What Slurm users type, through the real CLI: memory units in any case
 * (`mem=8g`, `8GB`, `8GiB`), and time limits as bare numbers (`-t 30` is
 * minutes in Slurm): fitq reads `--time-limit 30` as seconds, and says so
 * on stderr each time, for every flag that takes a limit.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';

/** Exit 2, one `Error: ...` line holding `message`, nothing on stdout. */
function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr.split('\n')).toEqual([`Error: ${message}`]);
  expect(result.stdout).toBe('');
}

const secondsWarning = (flag: string, text: string, shown = '') =>
  `Warning: ${flag} ${text} is read as ${text} seconds${shown}; write ${text}m for ${text} minutes (Slurm's -t ${text}), or ${text}s to say seconds`;

describe('memory units as Slurm users type them', () => {
  it('takes mem=8g, 8GB (powers of 1000) and 8GiB (of 1024) on fitq stage and fitq worker, keeping them as typed', async () => {
    const queue = newQueue();
    const staged = await fitq(['stage', '--json', '-r', 'mem=8g', 'a=8GB', 'b=8GiB', 'c=512mib', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const [run] = JSON.parse(staged.stdout) as { requires: string; resources: Record<string, number> }[];
    expect(run).toMatchObject({ requires: 'mem=8g a=8GB b=8GiB c=512mib', resources: { mem: 8e9, a: 8e9, b: 8 * 1024 ** 3, c: 512 * 1024 ** 2 } });

    const worker = await fitq(['worker', '--run-once', '--name', 'slurmish', '-r', 'mem=16gb', 'a=8G', 'b=8gi', 'c=1GiB', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);
    const client = await connectClient(queue);
    expect(await client.getRun(JSON.parse(staged.stdout)[0].id)).toMatchObject({ status: 'completed', worker: 'slurmish' });
  });

  it('refuses an unknown unit in one line quoting it, exit 2', async () => {
    const queue = newQueue();
    expectRefused(
      await fitq(['stage', '-r', 'mem=8X', '--', 'true'], { queue }),
      "invalid resource spec 'mem=8X': unknown unit 'X': K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024",
    );
    expectRefused(
      await fitq(['worker', '--run-once', '-r', 'mem=64Gig'], { queue }),
      "invalid resource spec 'mem=64Gig': unknown unit 'Gig': K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024",
    );
  });

  it('fitq stage --help says which units are powers of 1000 and which of 1024, and that demands are booked, not enforced', async () => {
    const help = await fitq(['stage', '--help'], { queue: newQueue() });
    expect(help.exitCode, help.stderr).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024');
    expect(text).toContain("Slurm's --mem=8G is mem=8Gi");
    expect(text).toContain('booked, not enforced');
  });
});

describe('time limits given as a bare number', () => {
  it('fitq stage --time-limit 30 is 30 seconds, with a warning saying so; 30m, 30:00 and 0-00:30 are not warned about', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bare = await fitq(['stage', '--time-limit', '30', '--', 'true'], { queue });
    expect(bare.exitCode, bare.stderr).toBe(0);
    expect(bare.stderr.split('\n')).toContain(secondsWarning('--time-limit', '30'));
    expect((await client.getRun(bare.stdout.trim())).timeLimit).toBe(30_000);
    for (const limit of ['30m', '30:00', '0-00:30']) {
      const result = await fitq(['stage', '--time-limit', limit, '--', 'true'], { queue });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr, limit).not.toContain('is read as');
      expect((await client.getRun(result.stdout.trim())).timeLimit, limit).toBe(1_800_000);
    }
  });

  it('fitq update --time-limit 30 and fitq worker --default-time-limit/--max-time-limit 30 warn the same way', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'], resources: 'foo=1' })).runs[0]!.id;
    const update = await fitq(['update', id, '--time-limit', '45'], { queue });
    expect(update.exitCode, update.stderr).toBe(0);
    expect(update.stderr.split('\n')).toContain(secondsWarning('--time-limit', '45'));
    expect((await client.getRun(id)).timeLimit).toBe(45_000);

    const worker = await fitq(['worker', '--run-once', '--default-time-limit', '60', '--max-time-limit', '120', '--log-format', 'json'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);
    expect(worker.stderr.split('\n')).toEqual(expect.arrayContaining([secondsWarning('--default-time-limit', '60', ' (1m)'), secondsWarning('--max-time-limit', '120', ' (2m)')]));
  });
});
