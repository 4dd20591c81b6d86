/**
 * Bidirectional controls (U+202E and the others) in what users typed and
 * what Redis holds: tables, `runs show`, `logs` notes and error messages
 * show them escaped, like other control characters, so a command cannot be
 * displayed in another order than it runs; `--json` keeps them intact.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue, startTestWorker, type CliResult } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/** Every bidirectional control: U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069. */
const BIDI = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
const ANY_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** How they are shown: \u061c ... \u2069. */
const ESCAPED = BIDI.map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

function expectOk(result: CliResult): void {
  expect(result.exitCode, result.stderr).toBe(0);
}

/** Nothing printed holds a bidirectional control as it is. */
function expectNoRawBidi(result: CliResult): void {
  expect(result.stdout).not.toMatch(ANY_BIDI);
  expect(result.stderr).not.toMatch(ANY_BIDI);
}

async function stage(queue: string, args: string[]): Promise<string> {
  const result = await fitq(['stage', ...args], { queue });
  expectOk(result);
  return result.stdout.trim();
}

describe('bidirectional controls are shown escaped', () => {
  it('in labels and commands: fitq runs (default and --wide) and runs show; --json keeps them', async () => {
    const queue = newQueue();
    const labels = { all: BIDI.join(''), spaced: `a ${BIDI.join('')} b` };
    const command = ['echo', 'txt.exe\u202efdp', `x${BIDI.join('')}`];
    const argv = await stage(queue, [...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]), '--', ...command]);
    const shell = await stage(queue, ['--shell', '--', `echo ${BIDI.join('')} done`]);

    for (const args of [['runs'], ['runs', '--wide'], ['runs', '--columns', 'id,labels,command']]) {
      const table = await fitq(args, { queue });
      expectOk(table);
      expectNoRawBidi(table);
      expect(table.stdout).toContain('"txt.exe\\u202efdp"');
    }
    const wide = await fitq(['runs', '--wide'], { queue });
    expect(wide.stdout).toContain(`all=${ESCAPED}`);
    expect(wide.stdout).toContain(`spaced="a ${ESCAPED} b"`);
    expect(wide.stdout).toContain(`echo "txt.exe\\u202efdp" "x${ESCAPED}"`);
    expect(wide.stdout).toContain(`sh -c "echo ${ESCAPED} done"`);

    const shown = await fitq(['runs', 'show', argv], { queue });
    expectOk(shown);
    expectNoRawBidi(shown);
    expect(shown.stdout).toContain(`command:   echo "txt.exe\\u202efdp" "x${ESCAPED}"`);
    expect(shown.stdout).toContain(`labels:    all=${ESCAPED} spaced="a ${ESCAPED} b"`);
    const shownShell = await fitq(['runs', 'show', shell], { queue });
    expectOk(shownShell);
    expectNoRawBidi(shownShell);
    expect(shownShell.stdout).toContain(`command:   sh -c "echo ${ESCAPED} done"`);

    // The data itself is intact.
    const json = JSON.parse((await fitq(['runs', 'show', argv, '--json'], { queue })).stdout) as { command: string[]; labels: unknown };
    expect(json.command).toEqual(command);
    expect(json.labels).toEqual(labels);
  });

  it('in error messages: a run id, a label name, a flag and a column name', async () => {
    const queue = newQueue();
    const cases: [string[], string][] = [
      [['runs', 'show', 'ab\u202ecd'], "invalid run id 'ab\\u202ecd'"],
      [['stage', '--label', 'k\u2067=v', '--', 'true'], "invalid label name 'k\\u2067'"],
      [['stage', '--\u202eshell', '--', 'true'], 'Nonexistent flag: --\\u202eshell'],
      [['runs', '--columns', 'id,\u200fstatus'], "unknown column '\\u200fstatus'"],
    ];
    for (const [args, fragment] of cases) {
      const result = await fitq(args, { queue });
      expect(result.exitCode, result.stderr).toBe(2);
      expectNoRawBidi(result);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(fragment);
    }
  });

  it('in reasons, as Redis holds them: fitq runs, runs show and logs', async () => {
    const queue = newQueue();
    const id = await stage(queue, ['-r', 'cpu=1', '--', 'no-such\u202ecommand']);
    await startTestWorker(queue, { resources: 'cpu=1' });
    const client = await connectClient(queue);
    await waitFor('the run to fail', async () => (await client.getRun(id)).status === 'failed');
    // The worker stores the reason escaped already; a reason written by anyone with write access to Redis need not be.
    await client.redis.hset(client.keys.run(id), 'reason', 'command not found: no-such\u202ecommand');

    const table = await fitq(['runs'], { queue });
    expectOk(table);
    expectNoRawBidi(table);
    expect(table.stdout).toContain('command not found: no-such\\u202ecommand');
    const shown = await fitq(['runs', 'show', id], { queue });
    expectOk(shown);
    expectNoRawBidi(shown);
    expect(shown.stdout).toContain('reason:    command not found: no-such\\u202ecommand');
    const logs = await fitq(['logs', id], { queue });
    expectOk(logs);
    expectNoRawBidi(logs);
    expect(logs.stderr).toContain('no-such\\u202ecommand');
  });
});
