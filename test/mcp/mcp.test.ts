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
      ['cancel_runs', 'hold_runs', 'list_pools', 'list_runs', 'list_workers', 'preview_cancel', 'preview_update', 'queue_summary', 'release_runs',
        'run_log', 'show_run', 'stage_run', 'wait_runs', 'why_waiting'],
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

    const refused = await mcp.callTool({ name: 'stage_run', arguments: { command: ['true'] } });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: this fitq mcp server only reads: start it with --allow-actions to let its client stage, hold, release or cancel runs' }],
    });
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
    expect(why).toEqual({ id: big, status: 'staged', why: (await fitq.getRun(big)).reason });
    expect(why.why).toMatch(/cpu=4/);
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
    const dependent = ((await call(mcp, 'stage_run', { command: ['true'], after: [big] })).runs as string[])[0]!;
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
});
