import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMicros, MAX_MICROS, parseDecimal } from '../../src/resources/amount.js';
import { formatResources, InvalidResourceSpecError, parseResourceSpecs } from '../../src/resources/spec.js';

const parse = (...specs: string[]) => formatResources(parseResourceSpecs(specs));

describe('resource specs', () => {
  it('parses pairs separated by spaces or commas and merges repeated specs, sorted', () => {
    expect(parse('foo=1 bar=2', 'baz=1')).toBe('bar=2 baz=1 foo=1');
    expect(parse('gpu=1,mem=8G  license=1')).toBe('gpu=1 license=1 mem=8000000000');
    expect(parse('')).toBe('');
  });

  it('understands decimals, exponents and unit suffixes exactly', () => {
    expect(parse('a=0.5 b=100e9 c=2K d=1.5M e=8G f=1T')).toBe(
      'a=0.5 b=100000000000 c=2000 d=1500000 e=8000000000 f=1000000000000',
    );
    expect(parse('a=1Ki b=1Mi c=16Gi d=1Ti')).toBe('a=1024 b=1048576 c=17179869184 d=1099511627776');
    expect(parse('a=0.000001 b=1.25e-3 c=.5 d=3.')).toBe('a=0.000001 b=0.00125 c=0.5 d=3');
  });

  it('takes units as Slurm users type them, in any case: K M G T and KB MB GB TB are powers of 1000, Ki Mi Gi Ti and KiB MiB GiB TiB of 1024', () => {
    const decimal = 'mem=8000000000';
    for (const value of ['8G', '8g', '8GB', '8gb', '8Gb', '8000M', '8000mb', '8e9']) expect(parse(`mem=${value}`), value).toBe(decimal);
    const binary = 'mem=8589934592';
    for (const value of ['8Gi', '8gi', '8GiB', '8gib', '8GIB', '8192Mi', '8192MiB']) expect(parse(`mem=${value}`), value).toBe(binary);
    expect(parse('a=2k b=2KB c=2KiB d=1.5t e=1TB f=1tib g=0.5GiB')).toBe(
      'a=2000 b=2000 c=2048 d=1500000000000 e=1000000000000 f=1099511627776 g=536870912',
    );
  });

  it('drops zero amounts: zero means no demand', () => {
    expect(parse('foo=0 bar=0.0 baz=1')).toBe('baz=1');
  });

  it.each([
    ['foo', "invalid resource spec 'foo': expected NAME=VALUE"],
    ['=5', "invalid resource spec '=5': empty resource name"],
    ['foo=', "invalid resource spec 'foo=': expected NAME=VALUE"],
    ['1foo=2', "invalid resource spec '1foo=2': resource name must match"],
    ['fo{o}=2', "invalid resource spec 'fo{o}=2': resource name must match"],
    [`${'a'.repeat(65)}=1`, 'at most 64 characters'],
    ['foo=-1', "invalid resource spec 'foo=-1': value must not be negative"],
    ['foo=NaN', "invalid resource spec 'foo=NaN': expected a non-negative number"],
    ['foo=Infinity', "invalid resource spec 'foo=Infinity'"],
    ['foo=1e999', "invalid resource spec 'foo=1e999': value too large"],
    ['foo=0.0000001', "invalid resource spec 'foo=0.0000001': more than 6 decimal places"],
    ['mem=8X', "invalid resource spec 'mem=8X': unknown unit 'X': K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024"],
    ['mem=8GBi', "invalid resource spec 'mem=8GBi': unknown unit 'GBi'"],
    ['mem=8 GB', "invalid resource spec 'GB': expected NAME=VALUE"],
    ['mem=8B', "invalid resource spec 'mem=8B': unknown unit 'B'"],
    ['mem=G', "invalid resource spec 'mem=G': expected a non-negative number like 2, 0.5, 100e9, 8G or 16Gi"],
    ['foo=1 foo=2', "invalid resource spec 'foo=2': resource 'foo' given twice"],
    ['foo=1e16', 'value too large to keep exactly'],
  ])('refuses %j, quoting the offending part', (spec, message) => {
    expect(() => parseResourceSpecs([spec])).toThrow(InvalidResourceSpecError);
    expect(() => parseResourceSpecs([spec])).toThrow(message);
  });

  it('refuses a name given twice across -r flags', () => {
    expect(() => parseResourceSpecs(['foo=1', 'bar=1 foo=3'])).toThrow("invalid resource spec 'foo=3': resource 'foo' given twice");
  });

  it('round-trips every amount it accepts through its decimal form', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_MICROS }), (micros) => {
        expect(parseDecimal(formatMicros(micros))).toBe(micros);
        const parsed = parseResourceSpecs([`x=${formatMicros(micros)}`]).get('x') ?? 0n;
        expect(parsed).toBe(micros);
      }),
    );
  });
});
