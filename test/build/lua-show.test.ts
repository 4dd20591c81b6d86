/**
 * `npm run lua:show SCRIPT` prints a script exactly as Redis gets it, from
 * the same code that loads the scripts (through dist/), so anyone can read
 * what a script really runs.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { luaScript, luaScripts } from '../../src/queue/lua-source.js';

const SHOW = fileURLToPath(new URL('../../scripts/lua-show.js', import.meta.url));
const show = (...args: string[]) => spawnSync(process.execPath, [SHOW, ...args], { encoding: 'utf8' });

describe('lua:show', () => {
  it('prints a script as Redis gets it, by its name, file or command', () => {
    const cancelRun = luaScript('cancelRun')!;
    for (const name of ['cancelRun', cancelRun.file, cancelRun.command]) {
      const shown = show(name);
      expect({ name, status: shown.status, stderr: shown.stderr }).toEqual({ name, status: 0, stderr: '' });
      expect(shown.stdout).toBe(cancelRun.lua);
    }
    expect(cancelRun.lua).toMatch(/^#!lua\nlocal CODE = \{[^\n]*\}\n--\[\[\n/);
    // Its keys built inline, as keys.ts spells them.
    expect(cancelRun.lua).not.toMatch(/\bKEY\./);
    expect(cancelRun.resolved).toMatch(/\bKEY\.run\(base, runId\)/);
  });

  it('lists the includes a script runs, and every script with its keys, lines and includes', () => {
    expect(show('claimRun', '--includes').stdout).toBe(`${luaScript('claimRun')!.includes.join('\n')}\n`);
    const listed = show().stdout.trim().split('\n');
    expect(listed.map((line) => line.split(/\s+/)[0])).toEqual(luaScripts().map((script) => script.file));
  });

  it('refuses a name that is no script, saying which are', () => {
    const shown = show('nope');
    expect(shown.status).toBe(2);
    expect(shown.stderr).toMatch(/^Error: no Lua script named 'nope' \(one of: abortBatch, appendLog, /);
  });
});
