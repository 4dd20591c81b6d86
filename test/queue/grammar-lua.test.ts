/**
 * The scripts check what they read from Redis against the grammar of what
 * fitq writes: names (run ids, worker names) as names.ts validates them, and
 * shapes as stage.ts makes them. Run in a real Redis with the includes the
 * scripts use, against the TypeScript side, so the two cannot drift apart:
 * a valid name or shape judged invalid would have its runs dropped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidName, MAX_NAME_LENGTH } from '../../src/model/names.js';
import { luaInclude } from '../../src/queue/lua-source.js';
import { shapeOf } from '../../src/model/stage.js';
import { MAX_MICROS } from '../../src/resources/amount.js';
import { MAX_RESOURCE_NAME_LENGTH } from '../../src/resources/spec.js';
import { MAX_DEVICE_INDEX } from '../../src/resources/devices.js';
import { connectClient, newQueue } from '../support/fitq.js';

/** Judges every ARGV with one include's function (`folder/name`, defining `name`): 1 valid, 0 not. */
const judgeAll = (path: string) => `${luaInclude(path)}
local verdicts = {}
for i = 1, #ARGV do verdicts[i] = ${path.split('/').pop()}(ARGV[i]) and 1 or 0 end
return verdicts`;

describe('validName (lua/includes/namespace/validName.lua)', () => {
  it('accepts exactly the names names.ts accepts', async () => {
    const client = await connectClient(newQueue());
    const samples = ['', 'a', 'A', '0', 'run-1', 'a.b_c-d', '.a', '-a', '_a', 'a:b', 't7:log', 'a{b}', 'a b', 'a\n', 'é', 'aé', '\u202e'];
    for (let code = 0; code < 128; code += 1) {
      const char = String.fromCharCode(code);
      samples.push(char, `a${char}`, `${char}a`);
    }
    for (const length of [MAX_NAME_LENGTH - 1, MAX_NAME_LENGTH, MAX_NAME_LENGTH + 1, 100_000]) samples.push('a'.repeat(length));
    const alphabet = fc.constantFrom(...'aZ09._-:{} \n\té'.split(''));
    samples.push(...fc.sample(fc.string({ unit: alphabet, minLength: 0, maxLength: 12 }), 2000));

    const verdicts = (await client.redis.eval(judgeAll('namespace/validName'), 0, ...samples)) as number[];
    const disagree = samples.filter((sample, i) => (verdicts[i] === 1) !== isValidName(sample));
    expect(disagree).toEqual([]);
    expect(verdicts.filter((verdict) => verdict === 1).length).toBeGreaterThan(100);
  });
});

describe('parseShape judging shapes (lua/includes/shape/parseShape.lua)', () => {
  it('accepts every shape stage.ts makes', async () => {
    const client = await connectClient(newQueue());
    const name = fc.stringMatching(new RegExp(`^[A-Za-z][A-Za-z0-9_.-]{0,${MAX_RESOURCE_NAME_LENGTH - 1}}$`));
    const micros = fc.oneof(fc.bigInt({ min: 1n, max: MAX_MICROS }), fc.constantFrom(1n, 500_000n, 1_000_000n, MAX_MICROS));
    const demands = fc.dictionary(name, micros, { maxKeys: 5 }).map((record) => new Map(Object.entries(record)));
    const devices = fc.uniqueArray(fc.integer({ min: 0, max: MAX_DEVICE_INDEX }), { maxLength: 4 }).map((list) => list.sort((a, b) => a - b));
    const limit = fc.option(fc.integer({ min: 1, max: 365 * 86_400_000 }), { nil: undefined });
    const shapes = fc.sample(fc.tuple(demands, devices, limit), 2000).map(([d, g, t]) => shapeOf(d, g, t));
    shapes.push('none', 'gpu=1;gpus=0', 'none;gpus=1023', 'cpu=0.000001', 'none;t=1', 'gpu=1;gpus=0;t=31536000000', 'cpu=1;t=60000');

    const verdicts = (await client.redis.eval(judgeAll('shape/parseShape'), 0, ...shapes)) as number[];
    expect(shapes.filter((_, i) => verdicts[i] !== 1)).toEqual([]);
  });

  it('refuses what fitq never writes', async () => {
    const client = await connectClient(newQueue());
    const hostile = [
      '', 'foo', 'cpu', 'cpu=', '=1', 'cpu=0', 'cpu=1.0', 'cpu=01', 'cpu=-1', 'cpu=1e3', 'cpu=1.0000001', 'cpu=x',
      'cpu=1,', ',cpu=1', 'cpu=1 mem=2', '1cpu=1', `${'a'.repeat(MAX_RESOURCE_NAME_LENGTH + 1)}=1`, 'cpu=99999999999999999999',
      'gpu=1;gpus=', 'gpu=1;gpus=a', 'gpu=1;gpus=01', 'gpu=1;gpus=1024', 'gpu=1;gpus=0;gpus=1', 'none;x', 'cpu=1;', 'c:pu=1',
      'cpu=1;t=', 'cpu=1;t=0', 'cpu=1;t=01', 'cpu=1;t=1.5', 'cpu=1;t=-1', 'cpu=1;t=31536000001', 'cpu=1;t=60;t=60', 'cpu=1;t=60;gpus=0',
      'cpu=1;T=60', ';t=60', 'none;t=99999999999999999999',
    ];
    const verdicts = (await client.redis.eval(judgeAll('shape/parseShape'), 0, ...hostile)) as number[];
    expect(hostile.filter((_, i) => verdicts[i] !== 0)).toEqual([]);
  });
});

describe('parseShape reading shapes (lua/includes/shape/parseShape.lua)', () => {
  it('gives the demands, pinned devices and time limit of shapes stage.ts makes', async () => {
    const client = await connectClient(newQueue());
    const shapes = ['none', 'gpu=1;gpus=0,3', 'cpu=1,mem=2;t=600', 'gpu=1;gpus=2;t=60', 'none;t=1'];
    const script = `${luaInclude('shape/parseShape')}
local out = {}
for i = 1, #ARGV do
  local shape = parseShape(ARGV[i])
  local demands = {}
  for _, item in ipairs(shape.demand) do demands[#demands + 1] = item[1] .. "=" .. formatAmount(item[2]) end
  out[i] = (#demands == 0 and "none" or table.concat(demands, ",")) .. "|" .. table.concat(shape.pinned, ",") .. "|" .. tostring(shape.limit)
end
return out`;
    expect(await client.redis.eval(script, 0, ...shapes)).toEqual(['none||nil', 'gpu=1|0,3|nil', 'cpu=1,mem=2||600', 'gpu=1|2|60', 'none||1']);
  });
});
