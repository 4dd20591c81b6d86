/** Bytes as people read them beside fitq's amounts: powers of 1000, as `mem=8G` is. */

const UNITS: readonly [string, number][] = [
  ['T', 1e12],
  ['G', 1e9],
  ['M', 1e6],
  ['K', 1e3],
];

/** `11.2G`, `8.0G`, `512.3M`, `900B`: one decimal in the largest unit the amount reaches. */
export function formatBytes(bytes: number): string {
  const unit = UNITS.find(([, size]) => bytes >= size);
  return unit ? `${(bytes / unit[1]).toFixed(1)}${unit[0]}` : `${Math.round(bytes)}B`;
}
