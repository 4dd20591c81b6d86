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
    ['foo=2GB', "invalid resource spec 'foo=2GB'"],
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
