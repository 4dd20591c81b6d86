/**
 * The order index (`order:<block>`): runs in staging order, written as they
 * are staged and taken out as they are removed (rm, clean, retention), so
 * a listing reads a page of it, never every run; runs an older fitq staged
 * (no index) are indexed once, in bounded calls, when first listed; Lua's
 * block size is keys.ts's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ORDER_BLOCK, orderBlock } from '../../src/queue/keys.js';
import type { FitqClient } from '../../src/client.js';
import { connectClient, newQueue } from '../support/fitq.js';

/** Every run id of the order index, in its order. */
async function indexed(client: FitqClient): Promise<string[]> {
  const keys = await client.redis.keys(`${client.keys.base}order:*`);
  const entries = (await Promise.all(keys.map(async (key) => {
    const flat = await client.redis.zrange(key, 0, -1, 'WITHSCORES');
    return Array.from({ length: flat.length / 2 }, (_, i) => ({ id: flat[2 * i]!, seq: Number(flat[2 * i + 1]) }));
  }))).flat();
  return entries.sort((a, b) => a.seq - b.seq).map(({ id }) => id);
}

describe('the order index', () => {
  it("holds each run by its staging number, in its block, as keys.ts's orderBlock and Lua's orderBlock say", () => {
    const lua = readFileSync(new URL('../../src/queue/lua/includes/lifecycle/orderBlock.lua', import.meta.url), 'utf8');
    expect(Number(/math\.floor\(tonumber\(seq\) \/ (\d+)\)/.exec(lua)?.[1])).toBe(ORDER_BLOCK);
    expect([orderBlock(1), orderBlock(ORDER_BLOCK - 1), orderBlock(ORDER_BLOCK), orderBlock(2 * ORDER_BLOCK + 5)]).toEqual([0, 0, 1, 2]);
  });

  it('gets each run as it is staged, loses it as it is removed, canceled and cleaned, or trimmed by retention', async () => {
    const client = await connectClient(newQueue());
    const ids = (await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 6 })).runs.map((run) => run.id);
    expect(await indexed(client)).toEqual(ids);
    const scores = await client.redis.zrange(client.keys.order(0), 0, -1, 'WITHSCORES');
    expect(scores.filter((_, i) => i % 2 === 1).map(Number)).toEqual(await Promise.all(ids.map(async (id) => (await client.getRun(id)).seq)));

    await client.removeRuns([ids[1]!]);
    await client.cancelRuns([ids[2]!, ids[3]!]);
    await client.cleanRuns({ statuses: ['canceled'] });
    expect(await indexed(client)).toEqual([ids[0], ids[4], ids[5]]);
    await client.cancelRuns([ids[0]!, ids[4]!]);
    await client.setRetention({ keepFailed: 0 });
    expect(await indexed(client)).toEqual([ids[5]]);
  });

  it('indexes the runs an older fitq staged the first time they are listed, and lists them in staging order', async () => {
    const client = await connectClient(newQueue());
    const ids = (await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 2500 })).runs.map((run) => run.id);
    // As an older fitq left them: no order index.
    await client.redis.del(client.keys.order(0));
    const page = await client.readRunPage({ limit: 3000 });
    expect(page.runs.map((run) => run.id)).toEqual(ids);
    expect(page.next).toBeUndefined();
    expect(await indexed(client)).toEqual(ids);
  });
});
