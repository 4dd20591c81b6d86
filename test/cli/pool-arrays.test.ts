/**
 * Arrays' limits in `fitq pool`: `pool ls` shows every one there is, under
 * its own heading, with how many of the array's runs run and wait; `pool
 * set array.ID=N` changes the limit of an array with staged or running
 * runs and refuses (exit 2) an ended or unknown one; `pool rm` removes the
 * limit of an ended array (a run of it restarted brings it back) and
 * refuses that of an array still going. Through the real CLI.
 */
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';

function expectOk(result: CliResult): string {
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** Exit 2, one `Error: ...` line, nothing on stdout. */
function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([`Error: ${message}`]);
  expect(result.stdout).toBe('');
}

const lines = (text: string) => text.trim().split('\n').map((line) => line.trimEnd().split(/\s{2,}/));

describe('fitq pool and arrays', () => {
  it('refuses the limit of an array that is not there, writing nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    expectRefused(
      await fitq(['pool', 'set', 'license=2', 'array.0123456789ab=4'], { queue }),
      "cannot set 'array.0123456789ab': array 0123456789ab has no staged or running runs (an array gets its limit from fitq stage --array LIST%N): nothing was set",
    );
    expect(await client.redis.exists(client.keys.poolCapacity)).toBe(0);
    expect(expectOk(await fitq(['pool', 'ls'], { queue })).trim()).toBe('The pool is empty.');
    // Only `array.` and an array id (12 lowercase hex digits, as fitq makes them) is an array's limit, for the scripts as for the listing.
    const [header, ...rows] = lines(expectOk(await fitq(['pool', 'set', 'array.licence=2', 'array.0123456789AB=1'], { queue })));
    expect(header).toEqual(['NAME', 'CAPACITY', 'USED', 'FREE']);
    expect(rows.sort()).toEqual([['array.0123456789AB', '1', '0', '1'], ['array.licence', '2', '0', '2']]);
    expectOk(await fitq(['pool', 'rm', 'array.licence', 'array.0123456789AB'], { queue }));
  });

  it('lists the limits of arrays under their own heading; set and rm act on an array still going, or refuse', async () => {
    const queue = newQueue();
    expectOk(await fitq(['pool', 'set', 'license=2'], { queue }));
    const staged = await fitq(['stage', '--hold', '--array', '0-2%2', '--', 'true'], { queue });
    expectOk(staged);
    const array = /Staged array (\S+)/.exec(staged.stderr)![1]!;
    expect(lines(expectOk(await fitq(['pool', 'set', `array.${array}=3`], { queue })))).toEqual([
      ['NAME', 'CAPACITY', 'USED', 'FREE'],
      ['license', '2', '0', '2'],
      [''],
      ['Array limits (fitq stage --array LIST%N):'],
      ['ARRAY', 'LIMIT', 'RUNNING', 'STAGED'],
      [array, '3', '0', '3'],
    ]);
    expectRefused(
      await fitq(['pool', 'rm', `array.${array}`], { queue }),
      `'array.${array}' is the limit of array ${array}: it goes with the array's runs (fitq runs rm --array ${array}); change it with fitq pool set array.${array}=N`,
    );
    const json = JSON.parse(expectOk(await fitq(['pool', 'ls', '--json'], { queue }))) as unknown[];
    expect(json).toEqual([
      { name: 'license', capacity: 2, used: 0 },
      { name: `array.${array}`, capacity: 3, used: 0, array, running: 0, staged: 3 },
    ]);
  });

  it('an ended array: its limit is listed and removable, never set; a run of it restarted brings it back', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const staged = await fitq(['stage', '--array', '0-1%1', '--', 'true'], { queue });
    const [first] = expectOk(staged).trim().split('\n');
    const array = /Staged array (\S+)/.exec(staged.stderr)![1]!;
    const worker = spawnCliWorker(queue, ['--run-once', '--name', 'w1']);
    expect((await worker.exited).exitCode).toBe(0);
    expect(lines(expectOk(await fitq(['pool', 'ls'], { queue })))).toEqual([
      ['Array limits (fitq stage --array LIST%N):'],
      ['ARRAY', 'LIMIT', 'RUNNING', 'STAGED'],
      [array, '1', '0', '0'],
    ]);
    expectRefused(
      await fitq(['pool', 'set', `array.${array}=4`], { queue }),
      `cannot set 'array.${array}': array ${array} has no staged or running runs (an array gets its limit from fitq stage --array LIST%N): nothing was set`,
    );
    expect(expectOk(await fitq(['pool', 'rm', `array.${array}`], { queue })).trim()).toBe(`Removed array.${array} from the pool.`);
    expect(expectOk(await fitq(['pool', 'ls'], { queue })).trim()).toBe('The pool is empty.');

    expectOk(await fitq(['restart', first!], { queue }));
    expect(await client.redis.hget(client.keys.poolCapacity, `array.${array}`)).toBe('1');
    const again = spawnCliWorker(queue, ['--run-once', '--name', 'w2']);
    expect((await again.exited).exitCode).toBe(0);
    expect(await client.getRun(first!)).toMatchObject({ status: 'completed', worker: 'w2' });
  });
});
