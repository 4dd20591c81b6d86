/**
 * A run that ends with a short log has it packed into one string in place of
 * its stream (a stream takes about 4 KB however few its lines): read back
 * the same, followed to its end at once, turned back into a stream when
 * BullMQ retries the run, and removed with the run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { LogEntry } from '../../src/model/logs.js';
import { connectClient, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';

/** Which form a run's log is in: 'packed', 'stream', or 'none'. */
async function logForm(client: FitqClient, runId: string): Promise<string> {
  const [packed, stream] = await Promise.all([client.redis.exists(client.keys.runPackedLog(runId)), client.redis.exists(client.keys.runLog(runId))]);
  return packed && stream ? 'both' : packed ? 'packed' : stream ? 'stream' : 'none';
}

const described = (entry: LogEntry) =>
  entry.kind === 'line' ? `${entry.stream} ${entry.line}` : entry.kind === 'end' ? `end ${entry.status}` : `restaged ${entry.reason}`;

/** A command that prints `started`, waits until `gate` exists, then prints `done`. */
function gated(gate: string): string[] {
  return ['sh', '-c', 'echo started; while [ ! -e "$1" ]; do sleep 0.02; done; echo done >&2', 'sh', gate];
}

describe('packed logs', () => {
  it('a short log is packed as its run ends, entry ids kept; a log of more than 100 entries stays a stream', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-packed-')), 'gate');
    const short = (await client.stage({ command: gated(gate) })).runs[0]!.id;
    const long = (await client.stage({ command: ['seq', '1', '150'] })).runs[0]!.id;
    await startTestWorker(queue, { concurrency: 2 });
    await expect.poll(async () => (await client.readLog(short)).map(described), { timeout: 10_000 }).toEqual(['stdout started']);
    const whileRunning = await client.readLog(short);
    expect(await logForm(client, short)).toBe('stream');
    writeFileSync(gate, '');
    await client.waitForEnd(short);
    await client.waitForEnd(long);

    expect(await logForm(client, short)).toBe('packed');
    const ended = await client.readLog(short);
    expect(ended.map(described)).toEqual(['stdout started', 'stderr done', 'end completed']);
    expect(ended[0]).toEqual(whileRunning[0]); // same id: a reader goes on where it was
    // Read in pages after any entry, as followers and fitq logs do.
    expect((await client.readLog(long)).length).toBe(151);
    expect(await logForm(client, long)).toBe('stream');
    expect(await client.redis.xlen(client.keys.runLog(long))).toBe(151);
  });

  it('packed, any line reads back as it was stored: NULs, control characters, quotes, backslashes, non-ASCII, U+FFFD', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const script = "printf 'nul:\\000:end\\n'; printf 'tab\\there \\033[1m\\r \"q\" \\\\ / \\n'; printf 'caf\\351 \\342\\202\\254 \\360\\237\\231\\202\\n'; printf '\\n'";
    const id = (await client.stage({ command: [script], shell: true })).runs[0]!.id;
    await startTestWorker(queue, { runOnce: true });
    await client.waitForEnd(id);
    expect(await logForm(client, id)).toBe('packed');
    expect((await client.readLog(id)).map(described)).toEqual([
      'stdout nul:\0:end', 'stdout tab\there \u001b[1m\r "q" \\ / ', 'stdout caf\uFFFD \u20ac \u{1F642}', 'stdout ', 'end completed',
    ]);
  });

  it('a follower waiting on a running run from its start gets every line and the end at once when its log is packed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-packed-')), 'gate');
    // A long lease: nothing but the run's end can wake the follower soon.
    await startTestWorker(queue, { leaseMs: 60_000 });
    const id = (await client.stage({ command: gated(gate) })).runs[0]!.id;
    await expect.poll(async () => (await client.getRun(id)).status, { timeout: 10_000 }).toBe('running');
    const seen: string[] = [];
    const following = client.followLog(id, (entry) => {
      seen.push(described(entry));
      // The follower waits for more now; the run ends while it does.
      if (entry.kind === 'line' && entry.line === 'started') writeFileSync(gate, '');
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the follower did not see the end within 15 s (the lease is 60 s)')), 15_000);
    });
    try {
      expect(await Promise.race([following, late])).toMatchObject({ id, status: 'completed' });
    } finally {
      clearTimeout(timer);
    }
    expect(seen).toEqual(['stdout started', 'stderr done', 'end completed']);
    expect(await logForm(client, id)).toBe('packed');
  });

  it('retried from BullMQ, a packed log is a stream again, the next attempt follows, and it is packed again at its end', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['sh', '-c', 'echo attempt; exit 3'] })).runs[0]!.id;
    await startTestWorker(queue);
    await client.waitForEnd(id);
    expect(await logForm(client, id)).toBe('packed');
    const first = await client.readLog(id);

    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: redisUrl() } });
    try {
      await (await bull.getJob(id))!.retry('failed');
    } finally {
      await bull.close();
    }
    await expect.poll(async () => (await client.getRun(id)).epoch, { timeout: 20_000 }).toBe(2);
    await client.waitForEnd(id);
    const both = await client.readLog(id);
    expect(both.map(described)).toEqual([
      'stdout attempt', 'end failed', 'restaged retried from BullMQ (it was failed)', 'stdout attempt', 'end failed',
    ]);
    expect(both.slice(0, 2)).toEqual(first);
    expect(await logForm(client, id)).toBe('packed');
  });

  it('a packed log not in fitq\'s format does not stop a retry from BullMQ: it is left, and the stream takes what follows', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = (await client.stage({ command: ['true'], resources: 'nowhere=1' })).runs[0]!.id;
    await client.cancelRun(id);
    const hostile = '[["1-0",["stream","stdout","line",{"a":1}]]]';
    await client.redis.set(client.keys.runPackedLog(id), hostile);
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: redisUrl() } });
    try {
      await (await bull.getJob(id))!.retry('failed');
    } finally {
      await bull.close();
    }
    // Catching up with BullMQ, as a worker's poll does (reads never write).
    await client.reconcile();
    expect((await client.listRuns()).map((run) => [run.id, run.status])).toEqual([[id, 'staged']]);
    expect(await client.redis.get(client.keys.runPackedLog(id))).toBe(hostile);
    expect((await client.redis.xrange(client.keys.runLog(id), '-', '+')).map(([, fields]) => fields)).toEqual([
      ['event', 'restaged', 'reason', 'retried from BullMQ (it was canceled)'],
    ]);
    await expect(client.readLog(id)).rejects.toThrow(`the packed output of run '${id}' is not in fitq's format`);
  });

  it('a packed log goes with its run (runs rm, runs clean)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [a, b] = (await client.stage({ command: ['true'], repeat: 2 })).runs.map((run) => run.id);
    await client.cancelRuns([a!, b!]);
    expect([await logForm(client, a!), await logForm(client, b!)]).toEqual(['packed', 'packed']);
    await client.removeRuns([a!]);
    expect(await client.cleanRuns()).toBe(1);
    expect([await logForm(client, a!), await logForm(client, b!)]).toEqual(['none', 'none']);
  });
});
