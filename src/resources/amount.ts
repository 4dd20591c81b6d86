/**
 * Exact resource amounts.
 *
 * An amount is kept as a bigint count of millionths ("micros"), so sums and
 * differences are exact; it is shown and stored in Redis as a plain decimal
 * string ("0.1", "8000000000"). The Lua scripts use the same decimal form.
 */

/** Millionths per unit: amounts carry at most 6 decimal places. */
export const MICROS_PER_UNIT = 1_000_000n;

/**
 * Largest whole part an amount may have. The Lua scripts keep the whole part
 * in a double, which is exact up to 2^53 - 1.
 */
export const MAX_WHOLE_UNITS = 9_007_199_254_740_991n;

/** Largest amount, in micros. */
export const MAX_MICROS = MAX_WHOLE_UNITS * MICROS_PER_UNIT + (MICROS_PER_UNIT - 1n);

/** Formats micros as the shortest exact decimal string: 1500000n -> "1.5". */
export function formatMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  const fraction = abs % MICROS_PER_UNIT;
  if (fraction === 0n) return `${sign}${whole}`;
  const digits = fraction.toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}.${digits}`;
}

/** Decimal suffixes for display, largest first (the parser also takes Ki Mi Gi Ti). */
const DISPLAY_SUFFIXES: readonly [string, bigint][] = [
  ['T', 1000n ** 4n],
  ['G', 1000n ** 3n],
  ['M', 1000n ** 2n],
  ['K', 1000n],
];

/**
 * An amount in human units, exact: the largest of K M G T that leaves a whole
 * part of at least 1 and at most 3 decimals, when that is shorter than the
 * plain number (8000000000n * 10^6 micros -> "8G", 1536 -> "1536", 0.5 ->
 * "0.5"). Never rounds, so it parses back to the same amount.
 */
export function formatHumanAmount(micros: bigint): string {
  const plain = formatMicros(micros);
  const abs = micros < 0n ? -micros : micros;
  const suffix = DISPLAY_SUFFIXES.find(([, unit]) => abs >= unit * MICROS_PER_UNIT && abs % ((unit * MICROS_PER_UNIT) / 1000n) === 0n);
  if (!suffix) return plain;
  const [name, unit] = suffix;
  // micros / unit is an amount in micros of the suffixed unit, with at most 3 decimals.
  const human = `${formatMicros(micros / unit)}${name}`;
  return human.length < plain.length ? human : plain;
}

/** Parses a canonical decimal string written by fitq ("12", "0.5") into micros. */
export function parseDecimal(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`not a decimal amount: '${text}'`);
  const [, sign, whole = '0', fraction = ''] = match;
  const micros = BigInt(whole) * MICROS_PER_UNIT + BigInt(fraction.padEnd(6, '0'));
  return sign === '-' ? -micros : micros;
}

/** Converts micros to a JavaScript number, for display and JSON only. */
export function microsToNumber(micros: bigint): number {
  return Number(formatMicros(micros));
}

/** Share of `part` in `whole`, as a percentage with one decimal, clamped to 0-100. */
export function percent(part: bigint, whole: bigint): number {
  if (whole <= 0n) return part > 0n ? 100 : 0;
  const tenths = Number((part * 1000n) / whole);
  return Math.min(100, Math.max(0, tenths / 10));
}
