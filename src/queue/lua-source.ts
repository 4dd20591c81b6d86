/**
 * The Lua scripts as Redis gets them. A script is `lua/<verbNoun>-<numberOfKeys>.lua`;
 * its `-- @include folder/name` lines are replaced by lua/includes/folder/name.lua
 * (whose own includes are resolved the same way, each include once, at its
 * first mention, so a function is defined before whatever calls it); after
 * its `#!lua` line comes the reply code table (`CODE`, script-codes.ts), and
 * each `KEY.<name>(base, part)` is replaced by the expression building that
 * key (key-layout.ts). scripts.ts loads
 * them; `npm run lua:show SCRIPT` (scripts/lua-show.js) prints one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isKeyName, luaKeyExpression, type KeyName } from './key-layout.js';
import { luaCodeTable } from './script-codes.js';

const LUA_DIR = new URL('./lua/', import.meta.url);
const INCLUDE_DIR = new URL('includes/', LUA_DIR);

/** An include's path under lua/includes/: its folder (its concern) and its name. */
const INCLUDE_PATH = /^[a-z]+\/\w+$/;

/** A script's file name. */
const SCRIPT_FILE = /^(\w+)-(\d+)\.lua$/;

/** A script's line naming one of its KEYS after its key in key-layout.ts: `local poolUsedKey = KEYS[3]`. */
const KEY_LOCAL = /^local (\w+)Key = KEYS\[(\d+)\]$/gm;

export interface LuaScript {
  /** `claimRun` */
  readonly name: string;
  /** `claimRun-30.lua` */
  readonly file: string;
  /** The command it is registered as on a connection: `fitqClaimRun`. */
  readonly command: string;
  readonly numberOfKeys: number;
  /** Its KEYS, in order, by their names in key-layout.ts (KEY_LAYOUT). */
  readonly keyNames: readonly KeyName[];
  /** The includes it runs (paths under lua/includes/), in the order they are pasted. */
  readonly includes: readonly string[];
  /** The script with its includes pasted, its keys still named as its source names them (`KEY.<name>(…)`). */
  readonly resolved: string;
  /** The script as Redis gets it. */
  readonly lua: string;
  readonly sha: string;
  /** Its first line says `flags=no-writes`: it only reads, and is called with EVALSHA_RO (script-call.ts). */
  readonly readOnly: boolean;
}

/** Includes read so far: a script pulls in dozens, many shared with the others. */
const includeTexts = new Map<string, string>();

function readInclude(path: string): string {
  const known = includeTexts.get(path);
  if (known !== undefined) return known;
  const url = new URL(`${path}.lua`, INCLUDE_DIR);
  if (INCLUDE_PATH.test(path) && existsSync(url)) {
    const text = readFileSync(url, 'utf8');
    includeTexts.set(path, text);
    return text;
  }
  const name = path.split('/').pop() ?? path;
  const moved = readdirSync(INCLUDE_DIR, { recursive: true, encoding: 'utf8' }).find((file) => file.endsWith(`/${name}.lua`));
  throw new Error(
    `no Lua include '${path}': an include is named by its path under lua/includes/ (folder/name)` +
      (moved ? `; '${name}' is '${moved.slice(0, -4)}'` : ''),
  );
}

/** Replaces `-- @include folder/name` lines, each include once; `included` gathers their paths in order. */
function resolveIncludes(lua: string, included: Set<string>): string {
  return lua.replace(/^-- @include (.*)$/gm, (_line, path: string) => {
    if (included.has(path)) return '';
    const text = readInclude(path);
    included.add(path);
    return resolveIncludes(text, included);
  });
}

/** Where a call's arguments end: the index of the `)` closing the one open at `start`, and the arguments at depth one. */
function callArguments(lua: string, start: number): { end: number; args: string[] } {
  const args: string[] = [];
  let depth = 1;
  let from = start;
  let quote: string | undefined;
  for (let i = start; i < lua.length; i++) {
    const char = lua[i]!;
    if (quote !== undefined) {
      if (char === '\\') i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '(') depth++;
    else if (char === ',' && depth === 1) {
      args.push(lua.slice(from, i).trim());
      from = i + 1;
    } else if (char === ')' && --depth === 0) {
      args.push(lua.slice(from, i).trim());
      return { end: i, args };
    }
  }
  throw new Error(`unclosed call in Lua: ${lua.slice(start - 20, start + 40)}`);
}

/** Replaces each `KEY.<name>(base, part)` with the expression building that key (key-layout.ts, luaKeyExpression). */
function inlineKeys(lua: string): string {
  const call = /\bKEY\.(\w+)\(/g;
  let out = '';
  let last = 0;
  for (let match = call.exec(lua); match !== null; match = call.exec(lua)) {
    const name = match[1]!;
    if (!isKeyName(name)) throw new Error(`Lua names KEY.${name}, which key-layout.ts (KEY_LAYOUT) does not describe`);
    const { end, args } = callArguments(lua, match.index + match[0].length);
    // Arguments may build keys themselves.
    out += lua.slice(last, match.index) + luaKeyExpression(name, args.map(inlineKeys));
    last = end + 1;
    call.lastIndex = last;
  }
  return out + lua.slice(last);
}

/**
 * Includes as the scripts get them (for tests running their functions in
 * Redis): lua/includes/<path>.lua for each path, after the includes they
 * name, with their keys built inline.
 */
export function luaInclude(...paths: string[]): string {
  const body = resolveIncludes(paths.map((path) => `-- @include ${path}`).join('\n'), new Set());
  return inlineKeys(body);
}

/**
 * A script's first line: `#!lua` with its flags (Redis 7). Redis reads the
 * flags only there. Without one Redis would check only a script's first
 * write against maxmemory, so a script could write on past it; with
 * `#!lua` (no flags) Redis refuses the whole script while it is out of
 * memory, before it writes anything. `flags=no-writes` (a script that only
 * reads: runs out of memory and on replicas) and `flags=allow-oom` (one that
 * must run out of memory) are the exceptions, each justified in its header.
 */
const SHEBANG = /^#!lua(?: flags=[\w,-]+)?\n/;

/** The KEYS a script names at its top, by their names in key-layout.ts, checked against its file name. */
function keyNamesOf(file: string, lua: string, numberOfKeys: number): KeyName[] {
  const names = [...lua.matchAll(KEY_LOCAL)].map((match, i) => {
    const [, name = '', index = ''] = match;
    if (Number(index) !== i + 1) throw new Error(`Lua script '${file}' names KEYS[${index}] where KEYS[${i + 1}] comes next`);
    if (!isKeyName(name)) throw new Error(`Lua script '${file}': '${name}Key = KEYS[${index}]' names no key of key-layout.ts (KEY_LAYOUT)`);
    return name;
  });
  if (names.length !== numberOfKeys) throw new Error(`Lua script '${file}' names ${names.length} KEYS at its top, its file name says ${numberOfKeys}`);
  return names;
}

/**
 * A script with its own code (what follows its last `-- @include` line) run
 * as a function of its own: Lua allows 200 locals per function, and every
 * include is a local of the main chunk, so the script's own locals (its
 * KEYS and ARGV by name) must not count against the same limit.
 */
function ownCodeInFunction(resolved: string, source: string): string {
  const includes = [...source.matchAll(/^-- @include .*$/gm)];
  const last = includes.at(-1);
  if (last === undefined) return resolved;
  const own = source.slice(last.index + last[0].length);
  if (!resolved.endsWith(own)) throw new Error('a script\'s own code must follow its includes');
  return `${resolved.slice(0, resolved.length - own.length)}\nreturn (function()${own}\nend)()\n`;
}

/** A script as Redis gets it: its `#!lua` line, then the reply code table (`CODE`), then the rest with its keys built inline. */
function loadScript(file: string): LuaScript {
  const match = SCRIPT_FILE.exec(file);
  if (!match) throw new Error(`Lua script name must be <verbNoun>-<numberOfKeys>.lua, got '${file}'`);
  const [, name = '', keys = '0'] = match;
  const text = readFileSync(new URL(file, LUA_DIR), 'utf8');
  const shebang = SHEBANG.exec(text)?.[0];
  if (shebang === undefined) throw new Error(`Lua script '${file}' must start with a '#!lua' line declaring its flags`);
  const included = new Set<string>();
  const body = ownCodeInFunction(resolveIncludes(text.slice(shebang.length), included), text.slice(shebang.length));
  const lua = shebang + luaCodeTable() + inlineKeys(body);
  return {
    name,
    file,
    command: `fitq${name[0]?.toUpperCase()}${name.slice(1)}`,
    numberOfKeys: Number(keys),
    keyNames: keyNamesOf(file, text, Number(keys)),
    includes: [...included],
    resolved: body,
    lua,
    sha: createHash('sha1').update(lua).digest('hex'),
    readOnly: /\bno-writes\b/.test(shebang),
  };
}

/** Script files by name (`claimRun` -> `claimRun-30.lua`), listed once per process. */
let scriptFiles: Map<string, string> | undefined;

function scriptFileNames(): Map<string, string> {
  scriptFiles ??= new Map(
    readdirSync(LUA_DIR)
      .filter((file) => file.endsWith('.lua'))
      .sort()
      .map((file) => [file.replace(/-\d+\.lua$/, ''), file]),
  );
  return scriptFiles;
}

/** Scripts built so far: each is built when first asked for (a command runs a few of them). */
const built = new Map<string, LuaScript>();

function builtScript(file: string): LuaScript {
  let script = built.get(file);
  if (script === undefined) {
    script = loadScript(file);
    built.set(file, script);
  }
  return script;
}

/** Every script. */
export function luaScripts(): readonly LuaScript[] {
  return [...scriptFileNames().values()].map(builtScript);
}

/** A script by its name (`claimRun`), file (`claimRun-30.lua`, with or without `.lua`) or command (`fitqClaimRun`). */
export function luaScript(name: string): LuaScript | undefined {
  const files = scriptFileNames();
  const byName = (verbNoun: string) => files.get(verbNoun);
  const file =
    byName(name) ??
    (/^fitq[A-Z]/.test(name) ? byName(name[4]!.toLowerCase() + name.slice(5)) : undefined) ??
    [...files.values()].find((each) => each === name || each === `${name}.lua`);
  return file === undefined ? undefined : builtScript(file);
}
