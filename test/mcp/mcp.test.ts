/**
 * `fitq mcp` driven by the Model Context Protocol SDK's own client over
 * stdio, against a real Redis and a real `fitq worker`: the tools are
 * listed with their schemas and annotations; a run is staged, waited for,
 * its log read, and another asked why it waits; tools that change the
 * queue are refused without --allow-actions; errors are one line.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { BIN, cliEnv, connectClient, newQueue } from '../support/fitq.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/** `fitq mcp ARGS` as an MCP client starts it: a process of its own, talked to on its stdin and stdout. */
async function connectMcp(queue: string, args: string[] = []): Promise<Client> {
  const client = new Client({ name: 'fitq-test', version: '1.0.0' });
  const env = { ...cliEnv(queue), PATH: process.env.PATH ?? '' };
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env, stderr: 'pipe' }));
  clients.push(client);
  return client;
}

/** A tool's structured result; the test fails on a tool error, with its text. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

describe('fitq mcp', () => {
  it('lists its tools with schemas and annotations; without --allow-actions it reads, and refuses to change the queue', async () => {
    const queue = newQueue();
    const mcp = await connectMcp(queue);
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(
      ['cancel_runs', 'hold_runs', 'list_pools', 'list_runs', 'list_workers', 'preview_cancel', 'preview_restart', 'preview_stage', 'preview_update',
        'queue_summary', 'release_runs', 'restart_runs', 'run_log', 'show_run', 'stage_run', 'update_runs', 'wait_runs', 'why_waiting'],
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
    }
    expect(byName.get('list_runs')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('cancel_runs')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('stage_run')!.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.get('preview_cancel')!.annotations).toMatchObject({ readOnlyHint: true });
    for (const name of ['update_runs', 'restart_runs']) expect(byName.get(name)!.annotations, name).toMatchObject({ readOnlyHint: false });
    // Every option of fitq stage, in the schema an agent reads.
    expect(Object.keys(byName.get('stage_run')!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(
      ['command', 'resources', 'gpus', 'array', 'after', 'timeLimit', 'labels', 'hold', 'beginAt', 'retryOnFailure', 'preemptible', 'env', 'priority'],
    ));
    expect(byName.get('preview_stage')!.inputSchema).toEqual(byName.get('stage_run')!.inputSchema);

    const refused = await mcp.callTool({ name: 'stage_run', arguments: { command: ['true'] } });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: this fitq mcp server only reads: start it with --allow-actions to let its client stage, update, hold, release, cancel or restart runs' }],
    });
    for (const name of ['update_runs', 'restart_runs']) expect(await mcp.callTool({ name, arguments: { runs: ['x'] } }), name).toMatchObject({ isError: true });
    expect(await call(mcp, 'list_runs')).toEqual({ runs: [] });
    // A user's mistake is one line, as the CLI says it.
    expect(await mcp.callTool({ name: 'show_run', arguments: { run: 'nosuchrun' } })).toEqual({
      isError: true,
      content: [{ type: 'text', text: "Error: unknown run 'nosuchrun'" }],
    });
  });

  it('stages a run, waits for it, reads its log, and says why another waits (a real worker)', async () => {
    const queue = newQueue();
    const fitq = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w1']);
    // Registered, so staging warns of no worker that could never run it.
    expect(await fitq.waitForWorkers((workers) => workers.some((w) => w.name === 'w1'), 30_000)).toBe(true);
    const mcp = await connectMcp(queue, ['--allow-actions']);

    const staged = await call(mcp, 'stage_run', { command: ['sh', '-c', 'echo hello from fitq; echo oops >&2'], resources: 'cpu=1', labels: { via: 'mcp' } });
    const [id] = staged.runs as string[];
    expect(staged.warnings).toEqual([]);
    const waited = await call(mcp, 'wait_runs', { runs: [id], timeoutSeconds: 60 });
    expect(waited).toMatchObject({ done: true, pending: [], runs: [{ id, status: 'completed', labels: { via: 'mcp' } }] });
    expect(await call(mcp, 'run_log', { run: id!.slice(0, 6) })).toEqual({
      lines: [{ stream: 'stdout', line: 'hello from fitq' }, { stream: 'stderr', line: 'oops' }],
      ended: 'completed',
    });

    // A run no worker can start: fitq's own answer.
    const big = ((await call(mcp, 'stage_run', { command: ['true'], resources: 'cpu=4' })).runs as string[])[0]!;
    const why = await call(mcp, 'why_waiting', { run: big });
    expect(why).toMatchObject({ id: big, status: 'staged', why: (await fitq.getRun(big)).reason });
    expect(why.why).toMatch(/cpu=4/);
    // And what would let it start: w1 has cpu=2 in all.
    expect(why.outlook).toMatchObject({
      runnable: false, reason: why.why, paused: false,
      workers: [{ worker: 'w1', startsNow: false, missing: [], beyondCapacity: [{ resource: 'cpu', need: '4', have: '2' }] }],
    });
    const listed = await call(mcp, 'list_runs', { status: ['staged'] });
    expect((listed.runs as { id: string }[]).map((run) => run.id)).toEqual([big]);
    expect(((await call(mcp, 'list_workers')).workers as { name: string }[]).map((w) => w.name)).toEqual(['w1']);
    // The queue at a glance, and previews that write nothing.
    expect(await call(mcp, 'queue_summary')).toMatchObject({
      paused: false,
      counts: { completed: 1, staged: 1 },
      stagedShapes: [{ demands: 'cpu=4', staged: 1, first: big }],
      lastHour: { ended: { completed: 1 }, complete: true },
    });
    const dependent = ((await call(mcp, 'stage_run', { command: ['true'], after: [{ kind: 'ok', runs: [big] }] })).runs as string[])[0]!;
    expect(await call(mcp, 'preview_cancel', { runs: [big] })).toEqual({
      runs: [{ id: big, status: 'staged', cascade: false }, { id: dependent, status: 'staged', cascade: true }],
    });
    expect(await call(mcp, 'preview_update', { runs: [big], priority: 5 })).toEqual({
      runs: [{ id: big, outcome: 'updated', changes: [{ field: 'priority', from: '0', to: '5' }] }],
    });
    expect(await fitq.getRun(big)).toMatchObject({ status: 'staged', priority: 0 });
    // A bounded wait on a run that cannot end says so.
    expect(await call(mcp, 'wait_runs', { runs: [big], timeoutSeconds: 0.2 })).toMatchObject({ done: false, pending: [big] });
    expect(await call(mcp, 'cancel_runs', { runs: [big] })).toEqual({ results: [{ id: big, outcome: 'canceled', status: 'canceled' }] });
    expect(await fitq.waitForEnd(dependent)).toMatchObject({ status: 'canceled' });

    worker.process.kill('SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    await fitq.close();
  });

  it('previews a stage (an array, a shape no worker takes, a mistake) writing nothing; stages an array, updates, restarts with the cascade', async () => {
    const queue = newQueue();
    const fitq = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w2']);
    expect(await fitq.waitForWorkers((workers) => workers.some((w) => w.name === 'w2'), 30_000)).toBe(true);
    const mcp = await connectMcp(queue, ['--allow-actions']);

    const sweep = { command: ['sh', '-c', 'echo lr={lr}'], resources: 'cpu=1', array: { params: [{ lr: '0.1' }, { lr: '0.2' }] } };
    const preview = await call(mcp, 'preview_stage', sweep);
    expect(preview).toMatchObject({
      count: 2,
      runs: [{ command: "sh -c 'echo lr=0.1'", requires: 'cpu=1', index: 0, params: { lr: '0.1' } }, { command: "sh -c 'echo lr=0.2'", index: 1, params: { lr: '0.2' } }],
      shapes: [{ requires: 'cpu=1', runs: 2, outlook: { runnable: true, workers: [{ worker: 'w2', startsNow: true }] } }],
      waitsFirst: [],
    });
    expect(await call(mcp, 'preview_stage', { command: ['true'], resources: 'cpu=8', hold: true })).toMatchObject({
      count: 1,
      shapes: [{ outlook: { runnable: false, workers: [{ worker: 'w2', beyondCapacity: [{ resource: 'cpu', need: '8', have: '2' }] }] } }],
      waitsFirst: ['held: it starts only once released'],
    });
    expect(await mcp.callTool({ name: 'preview_stage', arguments: { command: ['true'], resources: 'cpu=lots' } })).toMatchObject({ isError: true, content: [{ text: "Error: invalid resource spec 'cpu=lots': expected a non-negative number like 2, 0.5, 100e9, 8G or 16Gi" }] });
    expect(await fitq.listRuns()).toEqual([]);

    const staged = await call(mcp, 'stage_run', sweep);
    expect(staged).toMatchObject({ runs: [expect.any(String), expect.any(String)], array: expect.any(String), warnings: [] });
    const [first, second] = staged.runs as string[];
    const ofArray = await call(mcp, 'list_runs', { array: (staged.array as string).slice(0, 6) });
    expect((ofArray.runs as { id: string }[]).map((run) => run.id)).toEqual([first, second]);
    expect(await call(mcp, 'wait_runs', { runs: [first, second], timeoutSeconds: 60 })).toMatchObject({ done: true });
    expect(await call(mcp, 'run_log', { run: second })).toMatchObject({ lines: [{ stream: 'stdout', line: 'lr=0.2' }] });

    // Update a held run; restart a failed run and, with the cascade, the run canceled because of it.
    const held = ((await call(mcp, 'stage_run', { command: ['true'], hold: true })).runs as string[])[0]!;
    expect(await call(mcp, 'update_runs', { runs: [held], priority: 7, labels: { phase: 'two' } })).toMatchObject({
      runs: [{ id: held, outcome: 'updated', changes: expect.arrayContaining([{ field: 'priority', from: '0', to: '7' }]) }],
    });
    expect(await fitq.getRun(held)).toMatchObject({ status: 'held', priority: 7, labels: { phase: 'two' } });
    const failing = ((await call(mcp, 'stage_run', { command: ['sh', '-c', 'exit 3'] })).runs as string[])[0]!;
    const after = ((await call(mcp, 'stage_run', { command: ['true'], after: [{ kind: 'ok', runs: [failing] }] })).runs as string[])[0]!;
    expect(await fitq.waitForEnd(after)).toMatchObject({ status: 'canceled', canceledFor: failing });
    expect(await call(mcp, 'preview_restart', { runs: [failing], cascade: true })).toEqual({
      runs: [{ id: failing, status: 'failed', restarts: true, cascade: false }, { id: after, status: 'canceled', restarts: true, cascade: true }],
    });
    expect(await call(mcp, 'restart_runs', { runs: [failing], cascade: true })).toMatchObject({
      results: [{ id: failing, outcome: 'restarted', cascade: false }, { id: after, outcome: 'restarted', cascade: true }],
    });
    expect((await fitq.getRun(failing)).restarted).toBe(1);

    await call(mcp, 'cancel_runs', { runs: [held, failing, after] });
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    await fitq.close();
  });
});
