/**
 * The shape grammar has one owner in TypeScript (src/resources/shape.ts)
 * and one Lua twin (lua/includes/shape/parseShape.lua, formatShape.lua):
 * shapes made in TypeScript are read by the Lua twin inside a real Redis
 * exactly as they were made, shapes the Lua twin writes are read back in
 * TypeScript as they were, and both judge any text alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { luaInclude } from '../../src/queue/lua-source.js';
import { MAX_MICROS, MICROS_PER_UNIT } from '../../src/resources/amount.js';
import { MAX_DEVICE_INDEX } from '../../src/resources/devices.js';
import { formatShape, parseShape, shapeGroup, type Shape } from '../../src/resources/shape.js';
import { formatResources, MAX_RESOURCE_NAME_LENGTH } from '../../src/resources/spec.js';
import { connectClient, newQueue } from '../support/fitq.js';

const name = fc.oneof(
  fc.stringMatching(new RegExp(`^[A-Za-z][A-Za-z0-9_.-]{0,${MAX_RESOURCE_NAME_LENGTH - 1}}$`)),
  fc.constantFrom('gpu', 'cpu', 'mem', 'license', 'a', 'Z', `x${'y'.repeat(MAX_RESOURCE_NAME_LENGTH - 1)}`),
  // An array's limit, as sweep.ts names it.
  fc.stringMatching(/^[0-9a-f]{12}$/).map((id) => `array.${id}`),
);
const micros = fc.oneof(
  fc.bigInt({ min: 1n, max: MAX_MICROS }),
  // Fractional and unit amounts as stored: 0.5, 1e-6, 8G, 16Gi, 1.5T, the largest exact one.
  fc.constantFrom(1n, 500_000n, MICROS_PER_UNIT, 8_000_000_000n * MICROS_PER_UNIT, 16n * 1024n ** 3n * MICROS_PER_UNIT, 1_500_000_000_000n * MICROS_PER_UNIT, MAX_MICROS),
  fc.integer({ min: 1, max: 1_000_000 }).map(BigInt),
);
const shapes: fc.Arbitrary<Shape> = fc
  .record({
    demands: fc.dictionary(name, micros, { maxKeys: 8 }).map((record) => new Map(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))),
    gpus: fc.uniqueArray(fc.integer({ min: 0, max: MAX_DEVICE_INDEX }), { maxLength: 8 }).map((list) => list.sort((a, b) => a - b)),
    timeLimitMs: fc.option(fc.oneof(fc.integer({ min: 1, max: 365 * 86_400_000 }), fc.constantFrom(1, 60_000, 365 * 86_400_000)), { nil: undefined }),
    // Its project: a name as model/project.ts takes it.
    project: fc.option(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,63}$/), fc.constantFrom('vision', 'nlp-2026', 'p'.repeat(64))), { nil: undefined }),
    // Who staged its runs: a user name as stager.ts takes it.
    user: fc.option(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,63}$/), fc.constantFrom('alice', 'svc.ci@lab+gpu', '_', 'u'.repeat(64))), { nil: undefined }),
  })
  .map(({ timeLimitMs, project, user, ...rest }) => ({
    ...rest,
    ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
    ...(project === undefined ? {} : { project }),
    ...(user === undefined ? {} : { user }),
  }));

/** Each ARGV as the Lua twin reads it: group|demands (as a run's resources)|pinned|limit|project|user, or "invalid". */
const READ_IN_LUA = `${luaInclude('shape/parseShape', 'amounts/formatResourceList')}
local out = {}
for i = 1, #ARGV do
  local shape = parseShape(ARGV[i])
  out[i] = shape and (shape.group .. "|" .. formatResourceList(shape.demand) .. "|" .. table.concat(shape.pinned, ",") .. "|" .. tostring(shape.limit or "") .. "|" .. (shape.project or "") .. "|" .. (shape.user or "")) or "invalid"
end
return out`;

/** Shapes built in Lua from their parts (ARGV in fives: demands "a=1 b=2", pinned "0,1", limit, project, user), formatted by the twin. */
const WRITE_IN_LUA = `${luaInclude('shape/formatShape', 'amounts/parseResourceList')}
local out = {}
for i = 1, #ARGV, 5 do
  local pinned = {}
  for id in string.gmatch(ARGV[i + 1], "[^,]+") do pinned[#pinned + 1] = id end
  local project = ARGV[i + 3] ~= "" and ARGV[i + 3] or nil
  local user = ARGV[i + 4] ~= "" and ARGV[i + 4] or nil
  out[#out + 1] = formatShape({demand = parseResourceList(ARGV[i]), pinned = pinned, limit = tonumber(ARGV[i + 2]), project = project, user = user})
end
return out`;

const asReadInLua = (shape: Shape) =>
  [shapeGroup(shape), formatResources(shape.demands), shape.gpus.join(','), shape.timeLimitMs === undefined ? '' : String(shape.timeLimitMs), shape.project ?? '', shape.user ?? ''].join('|');

describe('shapes between TypeScript and Lua', () => {
  const edgeCases: Shape[] = [
    { demands: new Map(), gpus: [] },
    { demands: new Map(), gpus: [MAX_DEVICE_INDEX] },
    { demands: new Map(), gpus: [], timeLimitMs: 1 },
    { demands: new Map([['cpu', 1n]]), gpus: [] },
    { demands: new Map([['mem', MAX_MICROS]]), gpus: [0, 1, 2, 3], timeLimitMs: 365 * 86_400_000 },
    { demands: new Map([['gpu', MICROS_PER_UNIT]]), gpus: [2], timeLimitMs: 60_000, user: 'alice' },
    { demands: new Map(), gpus: [], user: 'u'.repeat(64) },
    { demands: new Map([['gpu', MICROS_PER_UNIT]]), gpus: [], timeLimitMs: 60_000, project: 'vision', user: 'alice' },
    { demands: new Map(), gpus: [], project: 'p'.repeat(64) },
    { demands: new Map([['array.0123456789ab', MICROS_PER_UNIT], ['cpu', 250_000n], ['gpu', 2n * MICROS_PER_UNIT], ['mem', 8_000_000_000n * MICROS_PER_UNIT]]), gpus: [1, 3] },
  ];
  const sample = [...edgeCases, ...fc.sample(shapes, 3000)];

  it('a shape TypeScript formats, the Lua twin reads as it was made', async () => {
    const client = await connectClient(newQueue());
    const texts = sample.map(formatShape);
    const read = (await client.redis.eval(READ_IN_LUA, 0, ...texts)) as string[];
    expect(read).toEqual(sample.map(asReadInLua));
    // And TypeScript reads its own text back as it was.
    expect(texts.map((text) => parseShape(text))).toEqual(sample);
  });

  it('a shape the Lua twin formats, TypeScript reads as it was made', async () => {
    const client = await connectClient(newQueue());
    const args = sample.flatMap((shape) => [formatResources(shape.demands), shape.gpus.join(','), shape.timeLimitMs === undefined ? '' : String(shape.timeLimitMs), shape.project ?? '', shape.user ?? '']);
    const texts = (await client.redis.eval(WRITE_IN_LUA, 0, ...args)) as string[];
    expect(texts).toEqual(sample.map(formatShape));
    expect(texts.map((text) => parseShape(text))).toEqual(sample);
  });

  it('both judge any text alike: a shape, or written by hand', async () => {
    const client = await connectClient(newQueue());
    const valid = fc.sample(shapes, 300).map(formatShape);
    // Valid shapes with one character changed, dropped or doubled, and text of the grammar's own characters.
    const mutated = valid.flatMap((text, i) => {
      const at = i % text.length;
      return [text.slice(0, at) + text.slice(at + 1), text.slice(0, at) + text[at] + text.slice(at), text.slice(0, at) + '0' + text.slice(at + 1)];
    });
    const alphabet = fc.constantFrom(...'ab=,;.01234567890gpust=none u@+-_'.split(''));
    const random = fc.sample(fc.string({ unit: alphabet, maxLength: 24 }), 2000);
    const hostile = ['', 'none', 'cpu=1,cpu=1', 'mem=2,cpu=1', 'cpu=1;gpus=1,0', 'cpu=1;gpus=0,0', 'none;t=31536000001', 'cpu=0.5000000', 'cpu=1.', 'cpu=.5', 'cpu=00.5',
      'none;u=', 'none;u=-x', 'none;u=.x', 'none;u=a;b', `none;u=${'u'.repeat(65)}`, 'none;u=a;t=5', 'cpu=1;u=a b', 'none;u=a{b}',
      'none;p=', 'none;p=-x', 'none;p=a;t=5', 'none;u=a;p=b', 'none;p=a;p=b;u=c', 'cpu=1;p=a b;u=c', `none;p=${'p'.repeat(65)}`];
    const texts = [...valid, ...mutated, ...random, ...hostile];
    const read = (await client.redis.eval(READ_IN_LUA, 0, ...texts)) as string[];
    const disagree = texts.filter((text, i) => (read[i] !== 'invalid') !== (parseShape(text) !== undefined));
    expect(disagree).toEqual([]);
    // The sample holds both kinds, so agreeing says something.
    expect(read.filter((verdict) => verdict === 'invalid').length).toBeGreaterThan(1000);
    expect(read.filter((verdict) => verdict !== 'invalid').length).toBeGreaterThan(300);
  });
});
