/**
 * How src is layered: every module of src belongs to a layer (LAYERS, the
 * map of src: where a new module goes), imports only modules of its own
 * layer or lower ones (`import type` too), and no chain of imports comes
 * back to where it started. Read from the import statements themselves
 * (plain text), so it holds for what the files say, whatever the compiler
 * makes of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * src's layers, lowest first: a module may import its own layer and those
 * below it, never one above. A folder (or a file) not named here has no
 * layer, which the test refuses: a new folder is placed here first.
 */
const LAYERS: readonly (readonly [path: string, rank: number, what: string])[] = [
  ['src/errors.ts', 0, 'errors users can act on, each with its exit code'],
  ['src/exit-codes.ts', 0, "fitq's exit codes, one table"],
  ['src/types', 0, 'type declarations of packages that ship none'],
  ['src/text', 1, 'quoting values for messages, on one line; UTF-8 that is not'],
  ['src/units', 2, 'durations, time limits and signals, ports; times and durations as people read them'],
  ['src/resources', 2, 'resource specs and amounts (gpu=1 mem=8G), GPU device lists'],
  ['src/redis', 2, 'connecting to Redis (URL, Sentinel and Cluster, TLS, eviction check, its errors), where keyless commands go, pipelines'],
  ['src/security', 2, 'the shared secret, run signatures, claim checks'],
  ['src/gpu', 2, "what nvidia-smi says of the devices, read; probing them for memory and processes fitq did not start"],
  ['src/model/run-fields.ts', 2, "the table of a run's stored fields (home, kind, signed), which signing reads too: it imports nothing"],
  ['src/model', 3, 'the run model: the run record and its stored data, staging and its checks, arrays, names, dependencies, why a run waits, workers and logs as read'],
  ['src/queue', 4, "the namespace's store in Redis: its keys, the Lua scripts and their typed calls, their reply codes"],
  ['src/operations', 5, 'one operation per module, plain functions taking a QueueContext first'],
  ['src/client-options.ts', 6, 'what a FitqClient is opened with, and the namespace it uses'],
  ['src/live', 5, "fitq's events (BullMQ's stream, fitq's channel) gathered into changes by topic, for live views"],
  ['src/client.ts', 6, 'FitqClient: connects, closes, and delegates each method to an operation'],
  ['src/present', 7, 'runs, results and workers as text, for the CLI and the dashboard alike'],
  ['src/worker', 8, 'the worker: claims runs and runs them'],
  ['src/dashboard', 8, 'the web dashboard'],
  ['src/metrics', 8, "Prometheus metrics of a worker and of a namespace"],
  ['src/top', 8, 'the live terminal view (fitq top): its snapshot, its frame as lines, the terminal it draws on'],
  ['src/mcp', 8, "fitq's tools for agents over the Model Context Protocol (fitq mcp)"],
  ['src/cli', 9, "what oclif commands share: the base command, flags and their parsing, printing"],
  ['src/commands', 10, 'one oclif command per module, thin'],
  ['src/hooks', 10, 'oclif hooks'],
  ['src/help.ts', 10, "oclif's help, as fitq shows it"],
  ['src/index.ts', 11, 'the public API'],
];

function layerOf(file: string): { path: string; rank: number } | undefined {
  let found: { path: string; rank: number } | undefined;
  for (const [path, rank] of LAYERS) {
    if ((file === path || file.startsWith(`${path}/`)) && (found === undefined || path.length > found.path.length)) found = { path, rank };
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `import … from '…'`, `import '…'`, `import type …`, `export … from '…'`, `import('…')`. */
const IMPORT = /(?:^|\n)[ \t]*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The src modules a file imports (relative specifiers only: packages are not src). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].flatMap((match) => {
    const specifier = match[1] ?? match[2]!;
    if (!specifier.startsWith('.')) return [];
    return [normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts')];
  });
}

const files = sourceFiles('src');
const graph = new Map(files.map((file) => [file, importsOf(file)]));

/** Every cycle's modules (Tarjan's strongly connected components), each as one path round it. */
function cycles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(pathRound(component));
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

/** A path from a component's first module back to it, through the component. */
function pathRound(component: string[]): string[] {
  const members = new Set(component);
  const start = component.sort()[0]!;
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): string[] | undefined => {
    for (const target of graph.get(file) ?? []) {
      if (target === start) return [...path, start];
      if (!members.has(target) || seen.has(target)) continue;
      seen.add(target);
      const found = walk(target, [...path, target]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]) ?? component;
}

describe('the layers of src', () => {
  it('reads the imports of every module of src', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get('src/client.ts')).toContain('src/operations/context.ts');
    // Type-only exports, imports spread over lines, and imports at run time count.
    expect(graph.get('src/index.ts')).toContain('src/model/worker-record.ts');
    expect(graph.get('src/model/stage.ts')).toContain('src/model/run-checks.ts');
    expect(graph.get('src/commands/worker.ts')).toContain('src/worker/worker.ts');
  });

  it('resolves every import to a module of src', () => {
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`));
    expect(missing).toEqual([]);
  });

  it('places every module of src in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('has no module import one of a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) => {
      const from = layerOf(file);
      return targets.flatMap((target) => {
        const to = layerOf(target);
        return from && to && to.rank > from.rank ? [`${file} (${from.path}, layer ${from.rank}) imports ${target} (${to.path}, layer ${to.rank})`] : [];
      });
    });
    expect(upward).toEqual([]);
  });

  it('has no cycle of imports', () => {
    expect(cycles().map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('names only folders and files that exist', () => {
    const paths = new Set(files.flatMap((file) => file.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    expect(LAYERS.map(([path]) => path).filter((path) => !paths.has(path))).toEqual([]);
  });
});
