/**
 * The namespace's keys are described once (keys.ts, KEY_LAYOUT): the
 * TypeScript keys and the Lua key table the scripts get are both built from
 * that description, so the two name every key alike, under any prefix, all
 * under the namespace's hash tag; and the names are those fitq has always
 * stored (docs/redis-keys.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KEY_LAYOUT, keyPart, luaKeyExpression, namespaceKey, namespaceKeys, type KeyName } from '../../src/queue/keys.js';
import { connectClient, newQueue } from '../support/fitq.js';

const NAMES = Object.keys(KEY_LAYOUT) as KeyName[];

/** A part for each kind of key built from data. */
const PART: Record<string, string> = { runId: 'a8e6f0', name: 'w1', shape: 'cpu=1,mem=2;gpus=0', names: 'cpu,mem', cause: 'array:0123456789ab', arrayId: '0123456789ab', state: 'completed', classId: '3f2a9c01d4e5b678', classGroup: '3f2a9c01d4e5b678|cpu,mem', block: '3', user: 'alice' };

describe('the key table', () => {
  it('names every key as fitq stores it', () => {
    const keys = namespaceKeys('q1', 'p');
    const w = keys.worker('w1');
    expect({
      base: keys.base, seq: keys.seq, ids: keys.ids, groups: keys.groups, batches: keys.batches, arrays: keys.arrays, arrayTally: keys.arrayTally,
      workers: keys.workers, holds: keys.holds, poolCapacity: keys.poolCapacity, poolUsed: keys.poolUsed, events: keys.events,
      settings: keys.settings, notifyOutbox: keys.notifyOutbox, reconcile: keys.reconcile, stats: keys.stats, dependentsPending: keys.dependentsPending,
      run: keys.run('r1'), runLog: keys.runLog('r1'), runPackedLog: keys.runPackedLog('r1'), runAttempts: keys.runAttempts('r1'),
      dependents: keys.dependents('r1'), arrayDependents: keys.arrayDependents('0123456789ab'), staged: keys.staged('cpu=1'), group: keys.group('cpu'),
      worker: [w.info, w.capacity, w.free, w.runs, w.devices, w.reserved],
      queue: [keys.queue.prefix, keys.queue.name, keys.queue.key('meta'), keys.queue.workerClientName('w1')],
    }).toEqual({
      base: 'p:{q1}:', seq: 'p:{q1}:seq', ids: 'p:{q1}:ids', groups: 'p:{q1}:groups', batches: 'p:{q1}:batches', arrays: 'p:{q1}:arrays',
      arrayTally: 'p:{q1}:arrays:tally', workers: 'p:{q1}:workers', holds: 'p:{q1}:holds', poolCapacity: 'p:{q1}:pool:capacity',
      poolUsed: 'p:{q1}:pool:used', events: 'p:{q1}:events', settings: 'p:{q1}:settings', notifyOutbox: 'p:{q1}:notify:outbox',
      reconcile: 'p:{q1}:reconcile', stats: 'p:{q1}:stats', dependentsPending: 'p:{q1}:dependents-pending',
      run: 'p:{q1}:runs:r1', runLog: 'p:{q1}:runs:r1:output', runPackedLog: 'p:{q1}:runs:r1:output:packed', runAttempts: 'p:{q1}:runs:r1:attempts',
      dependents: 'p:{q1}:dependents:r1', arrayDependents: 'p:{q1}:dependents:array:0123456789ab', staged: 'p:{q1}:staged:cpu=1', group: 'p:{q1}:group:cpu',
      worker: ['p:{q1}:worker:w1', 'p:{q1}:worker:w1:capacity', 'p:{q1}:worker:w1:free', 'p:{q1}:worker:w1:runs', 'p:{q1}:worker:w1:devices', 'p:{q1}:worker:w1:reserved'],
      queue: ['p:{q1}', 'runs', 'p:{q1}:runs:meta', 'p:{q1}:cnVucw==:w:w1'],
    });
    // BullMQ's own keys, which fitq's scripts name in the same table.
    expect(['queueWait', 'queueActive', 'queuePrioritized', 'queueDelayed', 'queueWaitingChildren', 'queueCompleted', 'queueFailed', 'queueEvents',
      'queueMeta', 'queueId', 'queuePc', 'queueMarker'].map((name) => namespaceKey(keys.base, name as KeyName))).toEqual(
      ['wait', 'active', 'prioritized', 'delayed', 'waiting-children', 'completed', 'failed', 'events', 'meta', 'id', 'pc', 'marker'].map((suffix) => keys.queue.key(suffix)),
    );
    expect([namespaceKey(keys.base, 'runLock', 'r1'), namespaceKey(keys.base, 'runLogs', 'r1'), namespaceKey(keys.base, 'queueMetrics', 'failed'),
      namespaceKey(keys.base, 'queueMetricsData', 'failed'), namespaceKey(keys.base, 'olderRuns')]).toEqual(
      ['p:{q1}:runs:r1:lock', 'p:{q1}:runs:r1:logs', 'p:{q1}:runs:metrics:failed', 'p:{q1}:runs:metrics:failed:data', 'p:{q1}:runs'],
    );
  });

  it('in Lua builds every key as TypeScript does, under any prefix, each under the namespace\'s hash tag', async () => {
    const client = await connectClient(newQueue());
    // Each key built as a script's `KEY.<name>(base, part)` is: from ARGV[1] (the base) and ARGV[2i + 3] (its part).
    const lua = `local out = {}\n${NAMES.map((name, i) => `out[#out + 1] = ${luaKeyExpression(name, keyPart(name) === undefined ? ['ARGV[1]'] : ['ARGV[1]', `ARGV[${2 * i + 3}]`])}`).join('\n')}\nreturn out`;
    for (const keys of [client.keys, namespaceKeys('ci.q-1', 'fitqci'), namespaceKeys()]) {
      const args = NAMES.flatMap((name) => [name, PART[keyPart(name) ?? ''] ?? '']);
      const built = (await client.redis.eval(lua, 0, keys.base, ...args)) as string[];
      expect(built).toEqual(NAMES.map((name) => namespaceKey(keys.base, name, keyPart(name) === undefined ? undefined : PART[keyPart(name)!])));
      // Each key carries its namespace's hash tag (`fitqci:{ci.q-1}:…`), so a script's keys share one Cluster slot.
      const tag = keys.base.match(/\{[^}]+\}/)![0];
      for (const key of built) expect(key.match(/\{[^}]*\}/)?.[0]).toBe(tag);
    }
  });

  it('spells a key in Lua as an expression of its base and part, and refuses a key keys.ts does not describe or a call missing its part', () => {
    expect(luaKeyExpression('poolUsed', ['base'])).toBe('(base .. "pool:used")');
    expect(luaKeyExpression('runLock', ['base', 'ids[i]'])).toBe('(base .. "runs:" .. ids[i] .. ":lock")');
    expect(() => luaKeyExpression('nope', ['base'])).toThrow("no key named 'nope' in KEY_LAYOUT");
    expect(() => luaKeyExpression('run', ['base'])).toThrow('KEY.run takes (base, runId), got 1 argument(s)');
    expect(() => namespaceKey('p:{q}:', 'run')).toThrow('key run is built from a runId: none given');
  });

  it('is the table docs/redis-keys.md gives, name by name', () => {
    const doc = readFileSync(new URL('../../docs/redis-keys.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('| Name | Key | Name | Key |'));
    const documented: Record<string, string> = {};
    for (const row of table.split('\n').slice(2)) {
      if (!row.startsWith('|')) break;
      for (const [, name, key] of row.matchAll(/\| `(\w+)` \| `([^`]+)` /g)) documented[name!] = key!;
    }
    expect(documented).toEqual(KEY_LAYOUT);
  });
});
