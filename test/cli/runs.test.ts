/**
 * `fitq runs`, `runs show`, `cancel`, `runs rm` and `logs` through the real
 * CLI: readable tables (commands, demands as typed, pins, human units),
 * --label selections, several ids at once and unique id prefixes.
 */
import { describe, expect, it } from 'vitest';
import { parseResourceSpec } from '../../src/resources/spec.js';
import { alterRunData, connectClient, fitq, newQueue, startTestWorker, type CliResult } from '../support/fitq.js';

/** The run id `fitq stage` printed. */
async function stage(queue: string, args: string[]): Promise<string> {
  const result = await fitq(['stage', ...args], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

function expectOk(result: CliResult): void {
  expect(result.exitCode, result.stderr).toBe(0);
}

/** Exit 2, one `Error: ...` line holding `message`, nothing on stdout, no stack trace. */
function expectRefused(result: CliResult, message: string): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([`Error: ${message}`]);
  expect(result.stdout).toBe('');
}

/** The table's rows by their first cell. */
function rowsById(stdout: string): { header: string; rows: Map<string, string> } {
  const [header = '', ...rows] = stdout.trim().split('\n');
  return { header, rows: new Map(rows.map((row) => [row.split(/\s+/)[0]!, row])) };
}

const statuses = async (queue: string, ids: string[]) => {
  const client = await connectClient(queue);
  return Promise.all(ids.map(async (id) => (await client.getRun(id)).status));
};

describe('fitq runs: what a user can read', () => {
  it('shows the command (cut at 40 characters), the demands as typed, pins, and human units for runs staged from a map', async () => {
    const queue = newQueue();
    const long = ['python', 'train.py', '--lr', '0.1', '--an-argument-long-enough-to-be-cut'];
    const sweep = await stage(queue, ['-r', 'gpu=1', '-r', 'mem=8G', '--label', 'sweep=lr', '--', ...long]);
    const pinned = await stage(queue, ['--gpus', '0,1', '-r', 'gpu=2,mem=0.5G', '--', 'echo', 'hi there']);
    const onePin = await stage(queue, ['--gpus', '3', '--', 'true']);
    const client = await connectClient(queue);
    const fromMap = (await client.stage({ command: ['true'], resources: new Map([['mem', 8_000_000_000_000_000n]]) })).runs[0]!.id;

    const table = await fitq(['runs'], { queue });
    expectOk(table);
    const { header, rows } = rowsById(table.stdout);
    expect(header).toMatch(/^ID\s+STATUS\s+USER\s+REQUIRES\s+COMMAND\s+WORKER\s+STARTED\s+DURATION\s+EXIT\s+WHY$/);
    const cut = `${long.join(' ').slice(0, 39)}…`;
    expect(cut).toHaveLength(40);
    expect(rows.get(sweep)).toMatch(new RegExp(`^${sweep}\\s+staged\\s+\\S+\\s+gpu=1 mem=8G\\s+${cut.replace(/[.]/g, '\\.')}\\s+no live worker$`));
    expect(rows.get(pinned)).toMatch(/\s+staged\s+\S+\s+gpu=2 mem=0\.5G @0,1\s+echo 'hi there'\s+/);
    expect(rows.get(onePin)).toMatch(/\s+staged\s+\S+\s+@3\s+true\s+/);
    expect(rows.get(fromMap)).toMatch(/\s+staged\s+\S+\s+mem=8G\s+true\s+/);
    expect(table.stdout).not.toContain('8000000000');

    const json = (JSON.parse((await fitq(['runs', '--json'], { queue })).stdout) as { runs: Record<string, unknown>[] }).runs;
    expect(json.map((run) => [run.id, run.requires, run.resources])).toEqual([
      [sweep, 'gpu=1 mem=8G', { gpu: 1, mem: 8_000_000_000 }],
      [pinned, 'gpu=2 mem=0.5G', { gpu: 2, mem: 500_000_000 }],
      [onePin, '', {}],
      [fromMap, 'mem=8G', { mem: 8_000_000_000 }],
    ]);

    const show = await fitq(['runs', 'show', pinned], { queue });
    expect(show.stdout).toMatch(/^requires:\s+gpu=2 mem=0\.5G @0,1$/m);
    expect(show.stdout).toMatch(/^command:\s+echo 'hi there'$/m);
  });

  it('--wide shows every column uncut; --columns picks columns; bad column lists are refused', async () => {
    const queue = newQueue();
    const command = ['sh', '-c', 'echo a command that is longer than forty characters for sure'];
    const shown = `sh -c '${command[2]}'`;
    const id = await stage(queue, ['-r', 'cpu=2', '--label', 'sweep=lr', '--priority', '3', '--', ...command]);

    const wide = rowsById((await fitq(['runs', '--wide'], { queue })).stdout);
    expect(wide.header).toMatch(/^ID\s+STATUS\s+USER\s+REQUIRES\s+COMMAND\s+LABELS\s+ARRAY\s+PRIORITY\s+WORKER\s+STAGED\s+STARTED\s+DURATION\s+EXIT\s+WHY$/);
    // (No array: an empty ARRAY cell.)
    expect(wide.rows.get(id)).toMatch(new RegExp(`${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}  sweep=lr {7,}3  `));

    const picked = await fitq(['runs', '--columns', 'id,labels,command'], { queue });
    expectOk(picked);
    const [header, row] = picked.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+LABELS\s+COMMAND$/);
    expect(row).toMatch(new RegExp(`^${id}\\s+sweep=lr\\s+`));
    expect(row?.endsWith(`  ${shown.slice(0, 39)}…`)).toBe(true);
    const pickedWide = await fitq(['runs', '--columns', 'command', '--wide'], { queue });
    expect(pickedWide.stdout.trim().split('\n')).toEqual(['COMMAND', shown]);

    const choose = 'choose from id, status, user, requires, command, labels, array, priority, worker, staged, started, duration, exit, why';
    const refusals = await Promise.all(
      [['--columns', 'id,colour'], ['--columns', 'id,,status'], ['--columns', 'id,ID'], ['--json', '--wide'], ['--json', '--columns', 'id']].map((args) =>
        fitq(['runs', ...args], { queue }),
      ),
    );
    expectRefused(refusals[0]!, `unknown column 'colour' in --columns 'id,colour': ${choose}`);
    expectRefused(refusals[1]!, `unknown column '' in --columns 'id,,status': ${choose}`);
    expectRefused(refusals[2]!, "column 'ID' given twice in --columns 'id,ID'");
    expectRefused(refusals[3]!, '--json prints every field: it takes no --wide');
    expectRefused(refusals[4]!, "--json prints every field: it takes no --columns 'id'");
  });

  it('keeps the demands exactly as typed, and never shows a typed text that disagrees with the stored amounts', async () => {
    const queue = newQueue();
    const id = await stage(queue, ['-r', 'mem=8000M,gpu=1', '-r', 'scratch=0', '--', 'true']);
    const client = await connectClient(queue);
    expect((await client.getRun(id)).requires).toBe('mem=8000M gpu=1 scratch=0');
    expect(parseResourceSpec((await client.getRun(id)).requires)).toEqual(new Map([['gpu', 1_000_000n], ['mem', 8_000_000_000_000_000n]]));

    // Someone rewrites the (unsigned) typed text: the stored amounts are shown instead.
    await alterRunData(client, id, (data) => (data.requires = 'gpu=1 mem=1G'));
    expect(JSON.parse((await fitq(['runs', 'show', id, '--json'], { queue })).stdout)).toMatchObject({ requires: 'gpu=1 mem=8G' });
    await alterRunData(client, id, (data) => (data.requires = 'not a spec'));
    expect((await client.getRun(id)).requires).toBe('gpu=1 mem=8G');
    // A run stored without the typed text (staged from amounts through the API).
    await alterRunData(client, id, (data) => delete data.requires);
    expect((await fitq(['runs', 'show', id], { queue })).stdout).toMatch(/^requires:\s+gpu=1 mem=8G$/m);
  }, 60_000);

  it('fitq workers shows capacity and use in human units', async () => {
    const queue = newQueue();
    const id = await stage(queue, ['-r', 'gpu=1 mem=8G', '--', 'sleep', '30']);
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'wh', resources: 'gpu=4 mem=64G', killGraceMs: 1000 });
    await expect.poll(async () => (await client.getRun(id)).status, { timeout: 10_000 }).toBe('running');
    const table = await fitq(['workers'], { queue });
    expect(table.stdout).toMatch(/^wh\s.*\sgpu=4 mem=64G\s+gpu=1 mem=8G\s/m);
    expect(table.stdout).not.toContain('000000');
    await client.cancelRun(id, { wait: true });
  });
});

describe('--label selections', () => {
  /** Stages runs that never start, through the API: their labels are what matters here. */
  async function stageLabeled(queue: string, ...labelSets: Record<string, string>[]): Promise<string[]> {
    const client = await connectClient(queue);
    const { runs } = await client.stage(labelSets.map((labels) => ({ command: ['true'], labels, resources: 'never=1' })));
    return runs.map((run) => run.id);
  }

  const sweep: Record<string, string>[] = [{ sweep: 'lr', i: '1' }, { sweep: 'lr', i: '2' }, { sweep: 'bs', expr: 'a=b' }, {}];

  it('fitq runs --label KEY=VALUE, repeatable: all must match', async () => {
    const queue = newQueue();
    const [lr1, lr2, bs] = await stageLabeled(queue, ...sweep);
    const listed = async (args: string[]) => (JSON.parse((await fitq(['runs', '--json', ...args], { queue })).stdout) as { runs: { id: string }[] }).runs.map((run) => run.id);
    const [lr, lrTwo, expr, lrCanceled, nothing, noValue, twice] = await Promise.all([
      listed(['--label', 'sweep=lr']),
      listed(['--label', 'sweep=lr', '--label', 'i=2']),
      listed(['--label', 'expr=a=b']),
      listed(['--label', 'sweep=lr', '--status', 'canceled']),
      fitq(['runs', '--label', 'sweep=nope'], { queue }),
      fitq(['runs', '--label', 'sweep'], { queue }),
      fitq(['runs', '--label', 'a=1', '--label', 'a=2'], { queue }),
    ]);
    expect(lr).toEqual([lr1, lr2]);
    expect(lrTwo).toEqual([lr2]);
    expect(expr).toEqual([bs]);
    expect(lrCanceled).toEqual([]);
    expect(nothing.stdout.trim()).toBe('No runs.');
    expectRefused(noValue, "invalid --label 'sweep': expected KEY=VALUE");
    expectRefused(twice, "invalid --label 'a=2': 'a' given twice");
  });

  it('fitq cancel --label: alone, the runs that can still be canceled; with --status, those', async () => {
    const queue = newQueue();
    const [lr1, lr2, bs, none] = await stageLabeled(queue, ...sweep);
    expectRefused(await fitq(['cancel', '--label', 'oops'], { queue }), "invalid --label 'oops': expected KEY=VALUE");
    const canceled = await fitq(['cancel', '--label', 'sweep=lr', '--label', 'i=1'], { queue });
    expectOk(canceled);
    expect(canceled.stdout.trim()).toBe(`Run ${lr1} canceled`);
    expect(await statuses(queue, [lr1!, lr2!, bs!, none!])).toEqual(['canceled', 'staged', 'staged', 'staged']);
    expect((await fitq(['cancel', '--label', 'sweep=lr'], { queue })).stdout.trim()).toBe(`Run ${lr2} canceled`);
    const [already, nothingLeft] = await Promise.all([
      fitq(['cancel', '--label', 'sweep=lr', '--status', 'canceled'], { queue }),
      fitq(['cancel', '--label', 'sweep=lr'], { queue }),
    ]);
    expect(already.stdout.trim().split('\n')).toEqual([`Run ${lr1} already canceled`, `Run ${lr2} already canceled`]);
    expect([nothingLeft.exitCode, nothingLeft.stderr.trim()]).toEqual([1, 'No runs match --status staged,held,running --label sweep=lr: nothing to cancel.']);
    expect(await statuses(queue, [bs!, none!])).toEqual(['staged', 'staged']);
  });

  it('fitq runs rm --label, with or without --status', async () => {
    const queue = newQueue();
    const [, , bs, none] = await stageLabeled(queue, ...sweep);
    expectRefused(await fitq(['runs', 'rm', '--label', 'oops'], { queue }), "invalid --label 'oops': expected KEY=VALUE");
    const nothing = await fitq(['runs', 'rm', '--label', 'sweep=lr', '--status', 'canceled'], { queue });
    expect([nothing.exitCode, nothing.stderr.trim()]).toEqual([1, 'No runs match --status canceled --label sweep=lr: nothing to remove.']);
    expect((await fitq(['runs', 'rm', '--label', 'sweep=lr'], { queue })).stdout.trim()).toBe('Removed 2 runs.');
    expect((await (await connectClient(queue)).listRuns()).map((run) => run.id)).toEqual([bs, none]);
  });
});

describe('fitq cancel with several runs', () => {
  it('takes --status as a comma-separated list too, on runs, cancel and runs rm', async () => {
    const queue = newQueue();
    const waiting = await stage(queue, ['-r', 'never=1', '--', 'true']);
    const canceled = await fitq(['cancel', '--status', 'staged,running'], { queue });
    expectOk(canceled);
    expect(canceled.stdout.trim()).toBe(`Run ${waiting} canceled`);
    const listed = await fitq(['runs', '--status', 'canceled,failed', '--columns', 'id,status'], { queue });
    expectOk(listed);
    expect(listed.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/))).toEqual([[waiting, 'canceled']]);
    const removed = await fitq(['runs', 'rm', '--status', 'failed,canceled'], { queue });
    expect(removed).toMatchObject({ exitCode: 0, stdout: 'Removed 1 run.' });
  });

  it('cancels several ids, checks them all first, reports each, and refuses a cancel that names nothing', async () => {
    const queue = newQueue();
    const a = await stage(queue, ['-r', 'never=1', '--', 'true']);
    const b = await stage(queue, ['-r', 'never=1', '--', 'true']);
    const c = await stage(queue, ['-r', 'never=1', '--', 'true']);

    expectRefused(await fitq(['cancel'], { queue }), 'name the runs to cancel, or select them with --status, --label, --array, --user or --mine');
    expectRefused(await fitq(['cancel', a, 'nope', b], { queue }), "unknown run 'nope'");
    expect(await statuses(queue, [a, b, c])).toEqual(['staged', 'staged', 'staged']);

    const both = await fitq(['cancel', a, b], { queue });
    expectOk(both);
    expect(both.stdout.trim().split('\n')).toEqual([`Run ${a} canceled`, `Run ${b} canceled`]);
    const again = await fitq(['cancel', b, c], { queue });
    expectOk(again);
    expect(again.stdout.trim().split('\n')).toEqual([`Run ${b} already canceled`, `Run ${c} canceled`]);
  });

  it('--status selects runs; running ones are stopped (--no-wait: only asked to stop); finished ones say so', async () => {
    const queue = newQueue();
    const done = await stage(queue, ['--', 'true']);
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'once', runOnce: true });
    await worker.done;
    const staged = await stage(queue, ['-r', 'never=1', '--', 'true']);
    const slow1 = await stage(queue, ['--', 'sleep', '60']);
    const slow2 = await stage(queue, ['--', 'sleep', '60']);
    await startTestWorker(queue, { name: 'busy', killGraceMs: 1000 });
    await expect.poll(async () => statuses(queue, [slow1, slow2]), { timeout: 10_000 }).toEqual(['running', 'running']);

    const requested = await fitq(['cancel', '--status', 'running', '--no-wait'], { queue });
    expectOk(requested);
    // Without waiting, a run its worker has stopped already by the time it is read back says so.
    const lines = requested.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const id of [slow1, slow2]) {
      expect(lines.filter((line) => line === `Cancel requested for run ${id}` || line === `Run ${id} canceled`)).toHaveLength(1);
    }
    for (const id of [slow1, slow2]) expect(await client.waitForEnd(id)).toMatchObject({ status: 'canceled' });

    const finished = await fitq(['cancel', done, staged], { queue });
    expectOk(finished);
    expect(finished.stdout.trim().split('\n')).toEqual([`Run ${done} already completed`, `Run ${staged} canceled`]);
  });

  it('waits for several running runs to end, all stopped together', async () => {
    const queue = newQueue();
    const runs = [await stage(queue, ['--', 'sleep', '60']), await stage(queue, ['--', 'sleep', '60'])];
    await startTestWorker(queue, { name: 'busy', killGraceMs: 1000 });
    await expect.poll(async () => statuses(queue, runs), { timeout: 10_000 }).toEqual(['running', 'running']);
    const stopped = await fitq(['cancel', ...runs], { queue });
    expectOk(stopped);
    expect(stopped.stdout.trim().split('\n')).toEqual(runs.map((id) => `Run ${id} canceled`));
    expect(await statuses(queue, runs)).toEqual(['canceled', 'canceled']);
  });
});

describe('unique id prefixes', () => {
  /** Stages runs with these ids through the API (those demanding never=1 never start). */
  async function stageIds(queue: string, ids: string[], resources = 'never=1'): Promise<void> {
    const client = await connectClient(queue);
    await client.stage(ids.map((runId) => ({ command: ['echo', `hello from ${runId}`], runId, resources })));
  }

  it('runs show, logs and logs -f take a unique prefix; a full id is that run even if it prefixes others', async () => {
    const queue = newQueue();
    await stageIds(queue, ['a8e6aaa', 'a8e6aaa-2']);
    await stageIds(queue, ['a81fbbb'], '');
    const { worker } = await startTestWorker(queue, { runOnce: true });
    await worker.done;
    const [short, full, longer, logs, follow, unknown] = await Promise.all([
      fitq(['runs', 'show', 'a81'], { queue }),
      fitq(['runs', 'show', 'a8e6aaa'], { queue }),
      fitq(['runs', 'show', 'a8e6aaa-', '--json'], { queue }),
      fitq(['logs', 'a81f'], { queue }),
      fitq(['logs', '-f', 'a81f'], { queue }),
      fitq(['runs', 'show', 'b'], { queue }),
    ]);
    expect(short.stdout).toMatch(/^id:\s+a81fbbb$/m);
    expect(full.stdout).toMatch(/^id:\s+a8e6aaa$/m);
    expect(longer.stdout).toContain('"id": "a8e6aaa-2"');
    expect(logs.stdout).toBe('hello from a81fbbb');
    expect(follow.stdout).toBe('hello from a81fbbb');
    expectRefused(unknown, "unknown run 'b'");
  });

  it('an ambiguous prefix is refused by every command, naming the candidates, and changes nothing; cancel and runs rm take prefixes', async () => {
    const queue = newQueue();
    await stageIds(queue, ['a8e6aaa', 'a8e6aaa-2', 'a81fbbb']);
    const ambiguous = "run id prefix 'a8' is ambiguous: a81fbbb, a8e6aaa, a8e6aaa-2";
    const refusals = await Promise.all([
      ...[['runs', 'show', 'a8'], ['logs', 'a8'], ['logs', '-f', 'a8'], ['cancel', 'a8'], ['runs', 'rm', 'a8']].map((args) => fitq(args, { queue })),
      fitq(['cancel', 'a8e6aaa', 'a8e6'], { queue }),
    ]);
    refusals.slice(0, 5).forEach((result) => expectRefused(result, ambiguous));
    expectRefused(refusals[5]!, "run id prefix 'a8e6' is ambiguous: a8e6aaa, a8e6aaa-2");
    expect(await statuses(queue, ['a8e6aaa', 'a8e6aaa-2', 'a81fbbb'])).toEqual(['staged', 'staged', 'staged']);

    expect((await fitq(['cancel', 'a8e6aaa-', 'a81'], { queue })).stdout.trim().split('\n')).toEqual(['Run a8e6aaa-2 canceled', 'Run a81fbbb canceled']);
    expect((await fitq(['runs', 'rm', 'a81', 'a8e6aaa-'], { queue })).stdout.trim()).toBe('Removed 2 runs.');
    // With a81fbbb gone, "a8" names the one run left.
    expect((await fitq(['runs', 'show', 'a8'], { queue })).stdout).toMatch(/^id:\s+a8e6aaa$/m);
  });

  it('names at most five candidates', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'q1'].map((runId) => ({ command: ['true'], runId, resources: 'never=1' })));
    expectRefused(await fitq(['runs', 'show', 'p'], { queue }), "run id prefix 'p' is ambiguous: p1, p2, p3, p4, p5, …");
    expect((await fitq(['runs', 'show', 'q', '--json'], { queue })).stdout).toContain('"id": "q1"');
    await client.removeRuns(['p6']);
    expect(await client.redis.zrange(client.keys.ids, 0, -1)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'q1']);
  });
});
