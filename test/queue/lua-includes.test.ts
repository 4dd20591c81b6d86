/**
 * How the Lua scripts are put together: one function per include, each
 * include naming the includes it calls; each script includes exactly the
 * functions it calls and names its KEYS as locals at its top.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const LUA_DIR = new URL('../../src/queue/lua/', import.meta.url);
const INCLUDE_DIR = new URL('includes/', LUA_DIR);

/** The include names that only gather others, kept so that `-- @include <name>` lines naming them work. */
const AGGREGATES = ['amounts', 'candidates', 'claims', 'clock', 'devices', 'jobKeys', 'jobs', 'lease', 'metrics', 'namespace', 'policy', 'retention', 'runs'];

const read = (url: URL) => readFileSync(url, 'utf8');
const includeNames = readdirSync(INCLUDE_DIR).filter((file) => file.endsWith('.lua')).map((file) => file.slice(0, -4));
const functionIncludes = includeNames.filter((name) => !AGGREGATES.includes(name));
const scripts = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua'));

function includesOf(text: string): string[] {
  return [...text.matchAll(/^-- @include (\w+)$/gm)].map((match) => match[1]!);
}

function withoutComments(text: string): string {
  return text.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
}

/** The code without comments and string literals. */
function code(text: string): string {
  return withoutComments(text).replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
}

/** The include functions a piece of code calls (not as a method or field, and not its own). */
function calls(text: string, own?: string): string[] {
  const called = new Set<string>();
  for (const match of code(text).matchAll(/(?<![.:\w])(\w+)\s*\(/g)) {
    const name = match[1]!;
    if (name !== own && functionIncludes.includes(name)) called.add(name);
  }
  return [...called].sort();
}

describe('Lua includes', () => {
  it('each holds one function, named after its file', () => {
    expect(functionIncludes.length).toBeGreaterThan(40);
    for (const name of functionIncludes) {
      const defined = [...code(read(new URL(`${name}.lua`, INCLUDE_DIR))).matchAll(/\blocal function (\w+)/g)].map((match) => match[1]);
      expect({ name, defined }).toEqual({ name, defined: [name] });
    }
  });

  it('each includes exactly the functions it calls', () => {
    for (const name of functionIncludes) {
      const text = read(new URL(`${name}.lua`, INCLUDE_DIR));
      expect({ name, includes: includesOf(text).sort() }).toEqual({ name, includes: calls(text, name) });
    }
  });

  it('the old aggregate names only include others, all of which exist', () => {
    for (const name of AGGREGATES) {
      const text = read(new URL(`${name}.lua`, INCLUDE_DIR));
      expect(code(text).trim()).toBe('');
      expect(includesOf(text).length).toBeGreaterThan(0);
      for (const included of includesOf(text)) expect(includeNames).toContain(included);
    }
  });
});

describe('Lua scripts', () => {
  it('include exactly the functions they call, no aggregate', () => {
    expect(scripts.length).toBeGreaterThan(10);
    for (const file of scripts) {
      const text = read(new URL(file, LUA_DIR));
      expect({ file, includes: includesOf(text).sort() }).toEqual({ file, includes: calls(text) });
    }
  });

  it('name each of their KEYS as a local at the top, one per declared key, and use only those names', () => {
    for (const file of scripts) {
      const numberOfKeys = Number(/-(\d+)\.lua$/.exec(file)![1]);
      const body = code(read(new URL(file, LUA_DIR)));
      const named = [...body.matchAll(/^local \w+ = KEYS\[(\d+)\]$/gm)].map((match) => Number(match[1]));
      expect({ file, named }).toEqual({ file, named: Array.from({ length: numberOfKeys }, (_, i) => i + 1) });
      // KEYS appears nowhere else.
      expect({ file, uses: body.match(/KEYS/g)?.length ?? 0 }).toEqual({ file, uses: numberOfKeys });
    }
  });

  it('open with a #!lua line declaring their flags (Redis reads them only there), and say why in their header', () => {
    for (const file of scripts) {
      const text = read(new URL(file, LUA_DIR));
      const flags = /^#!lua(?: flags=([\w-]+))?\n--\[\[\n/.exec(text)?.[1] ?? (text.startsWith('#!lua\n') ? 'none' : 'missing');
      expect({ file, flags }).toEqual({ file, flags: expect.stringMatching(/^(none|no-writes|allow-oom)$/) as unknown });
      const said = /^ {2}Flags: (none \(`#!lua`\)|no-writes|allow-oom):/m.exec(text)?.[1]?.replace(/ .*/, '');
      expect({ file, said }).toEqual({ file, said: flags });
    }
  });

  it('build no fixed key of the namespace from its base (they are passed in KEYS)', () => {
    const fixed = /base \.\. "(seq|ids|groups|workers|holds|pool:capacity|pool:used|settings|reconcile|events|runs:\w+)"|queueKey\(/;
    for (const file of scripts) {
      const lines = read(new URL(file, LUA_DIR)).split('\n').filter((line) => fixed.test(withoutComments(line)));
      expect({ file, lines }).toEqual({ file, lines: [] });
    }
  });
});
