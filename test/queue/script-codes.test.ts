/**
 * The scripts' reply codes: one table, every code a script names is in it,
 * and each refusal reaches users as one line with exit 2.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { SCRIPT_CODES } from '../../src/queue/script-codes.js';
import { connectClient, fitq, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';

const LUA_DIR = new URL('../../src/queue/lua/', import.meta.url);

function luaSources(): { file: string; text: string }[] {
  const files = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua')).map((file) => file);
  const includes = readdirSync(new URL('includes/', LUA_DIR), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.lua'))
    .map((file) => `includes/${file}`);
  return [...files, ...includes].map((file) => ({ file, text: readFileSync(new URL(file, LUA_DIR), 'utf8') }));
}

describe('script reply codes', () => {
  it('are distinct, and every CODE.<name> in the Lua scripts is in the table', () => {
    const codes = Object.values(SCRIPT_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    const named = luaSources().flatMap(({ file, text }) => [...text.matchAll(/\bCODE\.(\w+)/g)].map((match) => ({ file, name: match[1]! })));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter(({ name }) => !(name in SCRIPT_CODES))).toEqual([]);
  });

  it('no script replies with a bare status number where the table has a name for it', () => {
    const bare = luaSources()
      .filter(({ file }) => !file.startsWith('includes/'))
      .flatMap(({ file, text }) => [...text.matchAll(/^\s*(?:if .* then )?return \{?(-?\d+)[,}\s]/gm)].map((match) => `${file}: ${match[0].trim()}`));
    // appendLog replies with a count of lines, reconcileRuns with a flag.
    expect(bare.filter((line) => !/^(appendLog|reconcileRuns)-/.test(line))).toEqual([]);
  });
});

describe('refusals reach users as one line, exit 2', () => {
  it('a namespace of an older fitq is refused by stage and worker, saying what to do', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const redis = new Redis(redisUrl());
    try {
      // The older layout kept staged runs in a `runs` sorted set.
      await redis.zadd(`${client.keys.base}runs`, 1, 'old1');
      const staged = await fitq(['stage', '--', 'true'], { queue });
      expect(staged.exitCode).toBe(2);
      expect(staged.stderr.trim()).toBe(
        `Error: namespace '${client.keys.base}' holds runs stored by an older fitq, which this version cannot read: ` +
          `delete its keys (redis-cli --scan --pattern '${client.keys.base}*' | xargs -r redis-cli del) or use another --queue`,
      );
      const worker = await fitq(['worker', '-r', 'cpu=1', '--run-once'], { queue });
      expect(worker.exitCode, worker.stderr).toBe(2);
      expect(worker.stderr.trim()).toBe(staged.stderr.trim());
      expect(await redis.exists(`${client.keys.base}seq`)).toBe(0);
    } finally {
      await redis.del(`${client.keys.base}runs`);
      redis.disconnect();
    }
  });

  it('removing a running run without --force is refused, and removes nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['sleep', '30'] });
    const id = runs[0]!.id;
    const { worker } = await startTestWorker(queue, { name: 'w1', killGraceMs: 1000 });
    await expect.poll(async () => (await client.getRun(id)).status, { timeout: 10_000 }).toBe('running');
    const removed = await fitq(['runs', 'rm', id], { queue });
    expect(removed).toMatchObject({ exitCode: 2, stdout: '' });
    expect(removed.stderr.trim()).toBe(`Error: run '${id}' is running: cancel it first, or use --force`);
    expect((await client.getRun(id)).status).toBe('running');
    await worker.stop({ now: true });
  });
});
