/**
 * Reads Prometheus text exposition (what prom-client's registry writes) into
 * samples, so tests check the values a scraper would see.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) {
      labels[name!] = value!.replace(/\\(.)/g, (_all, char: string) => (char === 'n' ? '\n' : char));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3] === '+Inf' ? Infinity : match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}

/** The one value of `name` with `labels`; fails unless exactly one sample matches. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samplesOf(samples, name, labels);
  if (found.length !== 1) {
    throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}: ${JSON.stringify(found)}`);
  }
  return found[0]!.value;
}

/** The `# TYPE` each metric family is declared with. */
export function typesOf(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(name!, type!);
  return types;
}
