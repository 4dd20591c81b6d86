/**
 * How the Lua scripts are put together: includes by concern
 * (lua/includes/<folder>/<name>.lua), one function per include, each include
 * naming the includes it calls; each script includes exactly the functions it
 * calls and pulls in no include it never calls, names its KEYS as locals at
 * its top, and builds no key itself: every key is a `KEY.<name>(…)`, built
 * as keys.ts spells it. Only lua/includes/bullmq/ knows BullMQ's layout.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KEY_LAYOUT, keyPart, type KeyName } from '../../src/queue/keys.js';
import { luaInclude, luaScripts } from '../../src/queue/lua-source.js';

const LUA_DIR = new URL('../../src/queue/lua/', import.meta.url);
const INCLUDE_DIR = new URL('includes/', LUA_DIR);

const read = (url: URL) => readFileSync(url, 'utf8');
/** Every include, by its path under lua/includes/ (`bullmq/finishJob`). */
const includePaths = readdirSync(INCLUDE_DIR, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.lua'))
  .map((file) => file.slice(0, -4))
  .sort();
const includeText = (path: string) => read(new URL(`${path}.lua`, INCLUDE_DIR));
const scripts = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua'));
const scriptText = (file: string) => read(new URL(file, LUA_DIR));
/** The function an include defines: its file's name. */
const functionOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const includeOfFunction = new Map(includePaths.map((path) => [functionOf(path), path]));

function includesOf(text: string): string[] {
  return [...text.matchAll(/^-- @include (.*)$/gm)].map((match) => match[1]!);
}

/** Lua without its comments (a `--` inside a string is no comment). */
function withoutComments(text: string): string {
  return text
    .replace(/--\[\[[\s\S]*?\]\]/g, '')
    .split('\n')
    .map((line) => line.replace(/^((?:[^"'-]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-(?!-))*)--.*$/, '$1'))
    .join('\n');
}

/** The code without comments and string literals. */
function code(text: string): string {
  return withoutComments(text).replace(/"(?:[^"\\\n]|\\.)*"/g, '""').replace(/'(?:[^'\\\n]|\\.)*'/g, "''");
}

/** The includes whose functions a piece of code calls (not as a method or field, and not its own), by path. */
function calls(text: string, own?: string): string[] {
  const called = new Set<string>();
  for (const match of code(text).matchAll(/(?<![.:\w])(\w+)\s*\(/g)) {
    const path = includeOfFunction.get(match[1]!);
    if (path !== undefined && match[1] !== own) called.add(path);
  }
  return [...called].sort();
}

const FIXED_KEYS = (Object.keys(KEY_LAYOUT) as KeyName[]).filter((name) => keyPart(name) === undefined);
/** BullMQ's own keys: only lua/includes/bullmq/ names them. */
const BULLMQ_KEYS = (Object.keys(KEY_LAYOUT) as KeyName[]).filter((name) => /^(queue[A-Z]|runLock$|runLogs$)/.test(name));

describe('Lua includes', () => {
  it('lie in folders by concern, each holding one function, named after its file', () => {
    expect(includePaths.length).toBeGreaterThan(40);
    for (const path of includePaths) {
      expect({ path, folder: /^[a-z]+\/\w+$/.test(path) }).toEqual({ path, folder: true });
      const defined = [...code(includeText(path)).matchAll(/\blocal function (\w+)/g)].map((match) => match[1]);
      expect({ path, defined }).toEqual({ path, defined: [functionOf(path)] });
    }
  });

  it('each includes exactly the functions it calls, by path', () => {
    for (const path of includePaths) {
      const text = includeText(path);
      expect({ path, includes: includesOf(text).sort() }).toEqual({ path, includes: calls(text, functionOf(path)) });
    }
  });

  it('none only gathers others, and each is run by some script (an include no script runs goes)', () => {
    const run = new Set(luaScripts().flatMap((script) => script.includes));
    for (const path of includePaths) {
      expect({ path, code: code(includeText(path)).replace(/^-- @include.*$/gm, '').trim() !== '' }).toEqual({ path, code: true });
    }
    expect(includePaths.filter((path) => !run.has(path))).toEqual([]);
  });

  it('luaInclude gives tests an include with its keys built inline, and names where an include moved', () => {
    const countEnded = luaInclude('bullmq/countEnded');
    expect(countEnded).toMatch(/local function countEnded\(/);
    expect(countEnded).not.toMatch(/\bKEY\./);
    expect(countEnded).toContain('(base .. "runs:metrics:" .. state)');
    expect(() => luaInclude('countEnded')).toThrow("no Lua include 'countEnded': an include is named by its path under lua/includes/ (folder/name); 'countEnded' is 'bullmq/countEnded'");
  });
});

describe('Lua scripts', () => {
  it('include exactly the functions they call', () => {
    expect(scripts.length).toBeGreaterThan(10);
    for (const file of scripts) {
      const text = scriptText(file);
      expect({ file, includes: includesOf(text).sort() }).toEqual({ file, includes: calls(text) });
    }
  });

  it.each(luaScripts().map((script) => [script.file, script] as const))('%s pulls in only includes it calls', (file, script) => {
    // What the script calls, then what those call in turn: every include it is given must be among them.
    const used = new Set<string>();
    const next = calls(scriptText(file));
    while (next.length > 0) {
      const path = next.pop()!;
      if (used.has(path)) continue;
      used.add(path);
      next.push(...calls(includeText(path), functionOf(path)));
    }
    expect({ file, neverCalled: script.includes.filter((path) => !used.has(path)) }).toEqual({ file, neverCalled: [] });
    expect({ file, includes: [...script.includes].sort() }).toEqual({ file, includes: [...used].sort() });
  });

  it('name each of their KEYS as a local at the top, one per declared key, and use only those names', () => {
    for (const file of scripts) {
      const numberOfKeys = Number(/-(\d+)\.lua$/.exec(file)![1]);
      const body = code(scriptText(file));
      const named = [...body.matchAll(/^local \w+ = KEYS\[(\d+)\]$/gm)].map((match) => Number(match[1]));
      expect({ file, named }).toEqual({ file, named: Array.from({ length: numberOfKeys }, (_, i) => i + 1) });
      // KEYS appears nowhere else.
      expect({ file, uses: body.match(/KEYS/g)?.length ?? 0 }).toEqual({ file, uses: numberOfKeys });
    }
  });

  it('name their KEYS after keys.ts (`local poolUsedKey = KEYS[3]`), never the pub/sub channel', () => {
    for (const script of luaScripts()) {
      const locals = [...code(scriptText(script.file)).matchAll(/^local (\w+) = KEYS\[\d+\]$/gm)].map((match) => match[1]);
      expect({ file: script.file, locals }).toEqual({ file: script.file, locals: script.keyNames.map((name) => `${name}Key`) });
      expect(script.keyNames).not.toContain('events');
    }
  });

  it('are passed in KEYS every key of the namespace their code touches, and none they do not touch', () => {
    for (const script of luaScripts()) {
      const own = code(scriptText(script.file));
      const resolved = code(script.resolved);
      const built = new Set([...resolved.matchAll(/\bKEY\.(\w+)\(/g)].map((match) => match[1]!));
      const touched = FIXED_KEYS.filter((name) => name !== 'events' && built.has(name));
      expect({ file: script.file, missing: touched.filter((name) => !script.keyNames.includes(name)) }).toEqual({ file: script.file, missing: [] });
      // A declared key is used by its name in the script, or built by its includes.
      const unused = script.keyNames.filter((name) => !built.has(name) && own.match(new RegExp(`\\b${name}Key\\b`, 'g'))!.length < 2);
      expect({ file: script.file, unused }).toEqual({ file: script.file, unused: [] });
      // The script itself uses its KEYS, never builds a key of the namespace.
      const ownFixed = [...own.matchAll(/\bKEY\.(\w+)\(/g)].map((match) => match[1]!).filter((name) => FIXED_KEYS.includes(name as KeyName));
      expect({ file: script.file, ownFixed }).toEqual({ file: script.file, ownFixed: [] });
    }
  });

  it('open with a #!lua line declaring their flags (Redis reads them only there), and say why in their header', () => {
    for (const file of scripts) {
      const text = scriptText(file);
      const flags = /^#!lua(?: flags=([\w-]+))?\n--\[\[\n/.exec(text)?.[1] ?? (text.startsWith('#!lua\n') ? 'none' : 'missing');
      expect({ file, flags }).toEqual({ file, flags: expect.stringMatching(/^(none|no-writes|allow-oom)$/) as unknown });
      const said = /^ {2}Flags: (none \(`#!lua`\)|no-writes|allow-oom):/m.exec(text)?.[1]?.replace(/ .*/, '');
      expect({ file, said }).toEqual({ file, said: flags });
    }
  });

  it('build no fixed key of the namespace from its base (they are passed in KEYS)', () => {
    const fixed = /base \.\. "(seq|ids|groups|workers|holds|pool:capacity|pool:used|settings|reconcile|events|runs:\w+)"|queueKey\(/;
    for (const file of scripts) {
      const lines = scriptText(file).split('\n').filter((line) => fixed.test(withoutComments(line)));
      expect({ file, lines }).toEqual({ file, lines: [] });
    }
  });
});

/** Lua without its comments, each string literal's content blanked (same length). */
function blanked(text: string): string {
  const blank = (literal: string) => `${literal[0]}${'_'.repeat(literal.length - 2)}${literal[0]}`;
  return withoutComments(text).replace(/"(?:[^"\\\n]|\\.)*"/g, blank).replace(/'(?:[^'\\\n]|\\.)*'/g, blank);
}

/** The arguments of each `redis.call(…)`, `redis.pcall(…)` and `tryCall(…)` in a piece of code (strings blanked), split at top-level commas. */
function commandCalls(text: string): { command: string; args: string[] }[] {
  const found: { command: string; args: string[] }[] = [];
  const literal = withoutComments(text);
  const masked = blanked(text);
  const opening = /(?:redis\.p?call|tryCall)\(/g;
  for (let match = opening.exec(masked); match; match = opening.exec(masked)) {
    let depth = 0;
    let start = match.index + match[0].length;
    const args: string[] = [];
    for (let i = start; i < masked.length; i += 1) {
      const char = masked[i];
      if (char === '(' || char === '{' || char === '[') depth += 1;
      else if ((char === ')' || char === '}' || char === ']') && depth > 0) depth -= 1;
      else if (char === ',' && depth === 0) {
        args.push(masked.slice(start, i).trim());
        start = i + 1;
      } else if (char === ')' && depth === 0) {
        args.push(masked.slice(start, i).trim());
        break;
      }
    }
    // The command name, from the text with its strings.
    const command = /^\s*"(\w+)"/.exec(literal.slice(match.index + match[0].length))?.[1] ?? args[0] ?? '';
    found.push({ command: command.toUpperCase(), args: args.slice(1) });
  }
  return found;
}

describe('keys in the Lua scripts', () => {
  // The pieces of key names around a key's part (`runs:`, `:lock`, `worker:`), and the names of the namespace's fixed keys.
  const heads = Object.values(KEY_LAYOUT).flatMap((pattern) => (pattern.includes('<') ? [pattern.slice(0, pattern.indexOf('<'))] : []));
  const tails = Object.values(KEY_LAYOUT).flatMap((pattern) => (pattern.includes('>') && !pattern.endsWith('>') ? [pattern.slice(pattern.indexOf('>') + 1)] : []));
  const fixed = FIXED_KEYS.map((name) => KEY_LAYOUT[name] as string);

  it.each(luaScripts().map((script) => [script.file, script] as const))('%s builds no key from a string outside the generated key table', (file, script) => {
    // (What goes to Redis's log may name a key.)
    const lua = script.resolved.replace(/redis\.log\((?:[^()]|\([^()]*\))*\)/g, 'redis.log()');
    const masked = code(lua);
    // Not from the namespace's base (`base .. "pool:used"`), nor onto a key (`workerKey .. ":runs"`).
    expect({ file, fromBase: masked.match(/\bbase\s*\.\./g) ?? [] }).toEqual({ file, fromBase: [] });
    expect({ file, ontoKey: masked.match(/\b\w*[kK]ey\s*\.\./g) ?? [] }).toEqual({ file, ontoKey: [] });
    // No piece of a key's name joined with `..` (`"staged:" .. shape`, `key .. ":lock"`).
    const joined = [...withoutComments(lua).matchAll(/"((?:[^"\\\n]|\\.)*)"\s*\.\.|\.\.\s*"((?:[^"\\\n]|\\.)*)"/g)].map((match) => match[1] ?? match[2] ?? '');
    const pieces = joined.filter((text) => heads.some((head) => text.startsWith(head)) || tails.some((tail) => text.endsWith(tail)) || fixed.includes(text));
    expect({ file, pieces }).toEqual({ file, pieces: [] });
    // No key a command is given is joined there (`.. ":"`): a key is a name, or KEY.<name>(…).
    const joinedKeys = commandCalls(lua)
      .flatMap(({ command, args }) => (['DEL', 'EXISTS'].includes(command) ? args : args.slice(0, 1)))
      .filter((arg) => /\.\./.test(arg.replace(/\([^()]*\)/g, '()')));
    expect({ file, joinedKeys }).toEqual({ file, joinedKeys: [] });
  });

  it('only lua/includes/bullmq/ knows BullMQ\'s layout: its keys, the job fields it owns, its state names', () => {
    const bullKeyUse = new RegExp(`\\bKEY\\.(${BULLMQ_KEYS.join('|')})\\(`);
    const bullLocalUse = new RegExp(`\\b(${BULLMQ_KEYS.join('|')})Key\\b`);
    const fields = /(?<!')"(processedOn|finishedOn|returnvalue|failedReason|timestamp|opts|pb|ats|atm|delay|priority|data|jobId|active|prioritized|waiting-children)"(?!')/;
    const outside = [
      ...includePaths.filter((path) => !path.startsWith('bullmq/')).map((path) => ({ file: `includes/${path}.lua`, text: includeText(path) })),
      ...scripts.map((file) => ({ file, text: scriptText(file) })),
    ];
    for (const { file, text } of outside) {
      const lines = withoutComments(text).split('\n');
      expect({ file, keys: lines.filter((line) => bullKeyUse.test(line)) }).toEqual({ file, keys: [] });
      // A script may name BullMQ's keys its includes touch among its KEYS, and use them no further.
      expect({ file, locals: lines.filter((line) => !/= KEYS\[\d+\]$/.test(line) && bullLocalUse.test(line)) }).toEqual({ file, locals: [] });
      expect({ file, fields: lines.filter((line) => fields.test(line)) }).toEqual({ file, fields: [] });
    }
  });
});
