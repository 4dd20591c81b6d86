/**
 * Resource specs: `NAME=VALUE` pairs separated by spaces or commas, e.g.
 * `gpu=1 mem=8G license=1`. Values are exact (see amount.ts); zero means
 * "no demand" and is dropped.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { formatHumanAmount, formatMicros, MAX_MICROS, microsToNumber, parseDecimal } from './amount.js';

/** Resource name -> amount in micros, names sorted. Never holds zero amounts. */
export type Resources = ReadonlyMap<string, bigint>;

export const RESOURCE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]*$/;
export const MAX_RESOURCE_NAME_LENGTH = 64;

/**
 * Units, by their lower-case name (suffixes are read in any case, as Slurm
 * users type them: `8g`, `8GB`, `8GiB`): K M G T and KB MB GB TB are powers
 * of 1000, Ki Mi Gi Ti and KiB MiB GiB TiB powers of 1024. (So fitq's `8G`
 * is 8×10⁹, where Slurm's `--mem=8G` is 8 GiB: write `8Gi` for that.)
 */
const UNIT_MULTIPLIERS: Readonly<Record<string, bigint>> = Object.fromEntries(
  (['k', 'm', 'g', 't'] as const).flatMap((prefix, index) => {
    const power = BigInt(index + 1);
    return [
      [prefix, 1000n ** power],
      [`${prefix}b`, 1000n ** power],
      [`${prefix}i`, 1024n ** power],
      [`${prefix}ib`, 1024n ** power],
    ];
  }),
);

/** What a bad unit is told: the units there are. */
export const UNITS_HELP = 'K, M, G, T (also KB… TB) are powers of 1000, Ki, Mi, Gi, Ti (also KiB… TiB) of 1024';

const VALUE_PATTERN = /^(\d+)?(?:\.(\d*))?(?:[eE]([+-]?\d+))?([A-Za-z]*)$/;

/** A resource spec was malformed; the message quotes the offending part. */
export class InvalidResourceSpecError extends UsageError {
  override name = 'InvalidResourceSpecError';
  constructor(
    readonly part: string,
    readonly problem: string,
  ) {
    super(`invalid resource spec ${quote(part)}: ${problem}`);
  }
}

/** Parses one VALUE into micros, or returns the reason it is refused. */
export function parseAmount(value: string): bigint | string {
  const expected = 'expected a non-negative number like 2, 0.5, 100e9, 8G or 16Gi';
  if (value.startsWith('-')) return 'value must not be negative';
  const match = VALUE_PATTERN.exec(value);
  if (!match || (match[1] === undefined && !match[2])) return expected;
  const [, whole = '', fraction = '', exponentText = '0', unit = ''] = match;
  const multiplier = unit === '' ? 1n : UNIT_MULTIPLIERS[unit.toLowerCase()];
  if (multiplier === undefined) return `unknown unit ${quote(unit)}: ${UNITS_HELP}`;
  const mantissa = BigInt(`${whole}${fraction}` || '0');
  if (mantissa === 0n) return 0n;
  // value = mantissa * 10^(exponent - fraction digits) * unit, in micros.
  const exponent = Number(exponentText) - fraction.length + 6;
  if (exponent > 40) return tooLarge();
  let micros: bigint;
  if (exponent >= 0) {
    micros = mantissa * multiplier * 10n ** BigInt(exponent);
  } else {
    if (exponent < -40) return 'more than 6 decimal places';
    const divisor = 10n ** BigInt(-exponent);
    const scaled = mantissa * multiplier;
    if (scaled % divisor !== 0n) return 'more than 6 decimal places';
    micros = scaled / divisor;
  }
  return micros > MAX_MICROS ? tooLarge() : micros;
}

function tooLarge(): string {
  return `value too large to keep exactly (at most ${formatMicros(MAX_MICROS)})`;
}

/**
 * Parses and merges resource specs (each `-r` flag is one spec). Throws
 * InvalidResourceSpecError on the first bad part; a name given twice, in one
 * spec or across specs, is an error.
 */
export function parseResourceSpecs(specs: readonly string[], options: { keepZero?: boolean } = {}): Resources {
  const seen = new Set<string>();
  const amounts = new Map<string, bigint>();
  for (const spec of specs) {
    for (const part of specParts(spec)) {
      const eq = part.indexOf('=');
      if (eq < 0) throw new InvalidResourceSpecError(part, 'expected NAME=VALUE');
      const name = part.slice(0, eq);
      const value = part.slice(eq + 1);
      if (name === '') throw new InvalidResourceSpecError(part, 'empty resource name');
      if (!RESOURCE_NAME_PATTERN.test(name) || name.length > MAX_RESOURCE_NAME_LENGTH) {
        throw new InvalidResourceSpecError(
          part,
          `resource name must match ${RESOURCE_NAME_PATTERN.source.slice(1, -1)} (at most ${MAX_RESOURCE_NAME_LENGTH} characters)`,
        );
      }
      if (value === '') throw new InvalidResourceSpecError(part, 'expected NAME=VALUE');
      const micros = parseAmount(value);
      if (typeof micros === 'string') throw new InvalidResourceSpecError(part, micros);
      if (seen.has(name)) throw new InvalidResourceSpecError(part, `resource '${name}' given twice`);
      seen.add(name);
      if (micros > 0n || options.keepZero) amounts.set(name, micros);
    }
  }
  return sortResources(amounts);
}

/** The NAME=VALUE parts of one spec, as typed. */
export function specParts(spec: string): string[] {
  return spec.split(/[\s,]+/).filter((part) => part !== '');
}

/**
 * Demands parsed once, where they are given (a `-r` flag, the API's stage):
 * their exact amounts, and the specs as typed (typedSpecText), what `fitq
 * runs` shows. They travel as they are: nothing parses the same text again.
 */
export class Demands {
  constructor(
    readonly amounts: Resources,
    readonly typed: string,
  ) {}
}

/** Parses specs (each `-r` flag is one) into Demands. Throws InvalidResourceSpecError. */
export function parseDemands(specs: readonly string[], options: { keepZero?: boolean } = {}): Demands {
  return new Demands(parseResourceSpecs(specs, options), typedSpecText(specs));
}

/**
 * Specs as the user typed them, merged: each part kept verbatim, one space
 * between parts (`-r gpu=1,mem=8G -r x=0.5` -> "gpu=1 mem=8G x=0.5"); "" for
 * a map of amounts, which has no typed form.
 */
export function typedSpecText(input: ResourceInput | undefined): string {
  if (input instanceof Demands) return input.typed;
  if (typeof input === 'string') return specParts(input).join(' ');
  if (Array.isArray(input)) return (input as readonly string[]).flatMap(specParts).join(' ');
  return '';
}

/** Same as parseResourceSpecs, for a single spec string. */
export function parseResourceSpec(spec: string): Resources {
  return parseResourceSpecs([spec]);
}

export function sortResources(amounts: ReadonlyMap<string, bigint>): Resources {
  return new Map([...amounts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** "a=1 b=2.5", sorted by name; "" for no resources. The form stored in Redis and logged. */
export function formatResources(resources: Resources, separator = ' '): string {
  return [...sortResources(resources)].map(([name, micros]) => `${name}=${formatMicros(micros)}`).join(separator);
}

/** Like formatResources, in human units: "gpu=1 mem=8G". For display only. */
export function formatHumanResources(resources: Resources): string {
  return [...sortResources(resources)].map(([name, micros]) => `${name}=${formatHumanAmount(micros)}`).join(' ');
}

/** Whether two sets of demands are the same amounts of the same resources. */
export function sameResources(a: Resources, b: Resources): boolean {
  return a.size === b.size && [...a].every(([name, micros]) => b.get(name) === micros);
}

/** Parses the canonical form written by formatResources (trusted input from Redis). */
export function parseStoredResources(text: string | undefined): Resources {
  const amounts = new Map<string, bigint>();
  for (const part of (text ?? '').split(/[\s,]+/)) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    amounts.set(part.slice(0, eq), parseDecimal(part.slice(eq + 1)));
  }
  return sortResources(amounts);
}

/** Resources as the API takes them: specs (`"gpu=1 mem=8G"`, or several), a map of name to micros, or specs parsed already. */
export type ResourceInput = string | readonly string[] | Resources | Demands;

/**
 * Normalizes and validates resources given to the API. Maps are held to the
 * same rules as specs: valid names, amounts from 0 to the largest exact one.
 * Zero amounts are dropped unless `keepZero` (an edit's "remove this demand").
 */
export function toResources(input: ResourceInput | undefined, options: { keepZero?: boolean } = {}): Resources {
  if (input === undefined) return new Map();
  if (input instanceof Demands) return options.keepZero ? input.amounts : new Map([...input.amounts].filter(([, micros]) => micros > 0n));
  if (typeof input === 'string') return parseResourceSpecs([input], options);
  if (Array.isArray(input)) return parseResourceSpecs(input as readonly string[], options);
  const amounts = new Map<string, bigint>();
  for (const [name, micros] of input as Resources) {
    const part = `${name}=${String(micros)}`;
    if (!RESOURCE_NAME_PATTERN.test(name) || name.length > MAX_RESOURCE_NAME_LENGTH) {
      throw new InvalidResourceSpecError(part, `resource name must match ${RESOURCE_NAME_PATTERN.source.slice(1, -1)}`);
    }
    if (typeof micros !== 'bigint' || micros < 0n || micros > MAX_MICROS) {
      throw new InvalidResourceSpecError(part, 'amount must be a bigint count of millionths within range');
    }
    if (micros > 0n || options.keepZero) amounts.set(name, micros);
  }
  return sortResources(amounts);
}

/** Demands given to the API, parsed and checked (toResources) unless they are already; zero amounts dropped unless `keepZero`. */
export function toDemands(input: ResourceInput | undefined, options: { keepZero?: boolean } = {}): Demands {
  return new Demands(toResources(input, options), typedSpecText(input));
}

/** Parses a Redis hash of name -> decimal amount. */
export function resourcesFromHash(hash: Record<string, string>): Resources {
  return sortResources(new Map(Object.entries(hash).map(([name, value]) => [name, parseDecimal(value)])));
}

/** Resources as a JSON-friendly object of numbers, e.g. for FITQ_RESOURCES. */
export function resourcesToJson(resources: Resources): Record<string, number> {
  return Object.fromEntries([...resources].map(([name, micros]) => [name, microsToNumber(micros)]));
}
