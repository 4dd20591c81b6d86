import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatHumanAmount, formatMicros, MAX_MICROS, MICROS_PER_UNIT } from '../../src/resources/amount.js';
import { formatHumanResources, parseAmount, parseResourceSpecs, typedSpecText } from '../../src/resources/spec.js';

const units = (amount: string): bigint => {
  const micros = parseAmount(amount);
  if (typeof micros === 'string') throw new Error(micros);
  return micros;
};

/** Amounts with many trailing zeros, so every suffix gets exercised. */
const roundish = fc
  .tuple(fc.bigInt({ min: 1n, max: 999_999n }), fc.integer({ min: 0, max: 18 }))
  .map(([mantissa, zeros]) => mantissa * 10n ** BigInt(zeros))
  .filter((micros) => micros <= MAX_MICROS);
const anyAmount = fc.oneof(fc.bigInt({ min: 0n, max: MAX_MICROS }), roundish);

describe('amounts in human units', () => {
  it.each([
    ['8000000000', '8G'],
    ['64000000000', '64G'],
    ['1500000000', '1.5G'],
    ['2000000000000', '2T'],
    ['500000', '500K'],
    ['1000', '1K'],
    ['0.5', '0.5'],
    ['1536', '1536'],
    ['1500', '1500'],
    ['1234567000', '1234.567M'],
    ['8589934592', '8589934592'],
    ['1000.5', '1000.5'],
    ['0', '0'],
    ['9007199254740991.999999', '9007199254740991.999999'],
  ])('%s is shown as %s', (amount, shown) => {
    expect(formatHumanAmount(units(amount))).toBe(shown);
  });

  it('parses back to the very same amount, is never longer than the plain number and has at most 3 decimals before a suffix', () => {
    fc.assert(
      fc.property(anyAmount, (micros) => {
        const shown = formatHumanAmount(micros);
        expect(parseResourceSpecs([`x=${shown}`], { keepZero: true }).get('x')).toBe(micros);
        expect(shown.length).toBeLessThanOrEqual(formatMicros(micros).length);
        const suffixed = /^(\d+)(?:\.(\d+))?([KMGT])$/.exec(shown);
        if (suffixed) {
          expect(suffixed[2]?.length ?? 0).toBeLessThanOrEqual(3);
          expect(BigInt(suffixed[1]!)).toBeGreaterThanOrEqual(1n);
        } else {
          expect(shown).toBe(formatMicros(micros));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('shows a whole number of K, M, G or T below 1000 with that suffix', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999n }), fc.constantFrom<[string, bigint]>(['K', 3n], ['M', 6n], ['G', 9n], ['T', 12n]), (whole, [suffix, zeros]) => {
        expect(formatHumanAmount(whole * 10n ** zeros * MICROS_PER_UNIT)).toBe(`${whole}${suffix}`);
      }),
    );
  });

  it('formats demands sorted by name, and keeps typed specs verbatim', () => {
    expect(formatHumanResources(parseResourceSpecs(['mem=8G gpu=1', 'x=0.25']))).toBe('gpu=1 mem=8G x=0.25');
    expect(typedSpecText(['gpu=1,mem=8Gi', '  x=0.5  ', ''])).toBe('gpu=1 mem=8Gi x=0.5');
    expect(typedSpecText('a=1K\tb=0')).toBe('a=1K b=0');
    expect(typedSpecText(new Map([['a', 1n]]))).toBe('');
  });
});
