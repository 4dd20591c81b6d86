#!/usr/bin/env node
// Prints a Lua script exactly as Redis gets it: its `#!lua` line, the reply
// code table, then the script with its includes pasted in and its keys built
// inline (src/queue/lua-source.ts, through dist/, built first if the sources
// changed: the build's output goes to stderr).
//   npm run -s lua:show claimRun               the script (-s: without npm's banner)
//   npm run -s lua:show -- claimRun --includes the includes it runs, in order
//   npm run -s lua:show                        every script: its keys, lines and includes
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFresh } from './build-freshness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// A reader that stops early (`| head`) is no error.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});
const args = process.argv.slice(2);
const includes = args.includes('--includes');
const names = args.filter((arg) => arg !== '--includes');
const unknown = names.find((arg) => arg.startsWith('-'));
if (unknown !== undefined || names.length > 1) {
  console.error(`Error: ${unknown === undefined ? 'one script at most' : `unknown flag '${unknown}'`} (usage: lua-show [SCRIPT] [--includes])`);
  process.exit(2);
}

if (!isFresh(root)) {
  const built = spawnSync(process.execPath, [join(root, 'scripts/build.js')], { cwd: root, stdio: ['ignore', 2, 2] });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const { luaScript, luaScripts } = await import('../dist/queue/lua-source.js');

if (names.length === 0) {
  for (const script of luaScripts()) {
    const lines = script.lua.split('\n').length - 1;
    console.log(`${script.file.padEnd(28)} ${String(script.numberOfKeys).padStart(3)} keys ${String(lines).padStart(6)} lines ${String(script.includes.length).padStart(4)} includes`);
  }
} else {
  const script = luaScript(names[0]);
  if (script === undefined) {
    console.error(`Error: no Lua script named '${names[0]}' (one of: ${luaScripts().map((each) => each.name).join(', ')})`);
    process.exit(2);
  }
  process.stdout.write(includes ? `${script.includes.join('\n')}\n` : script.lua);
}
