/**
 * Installing builds once: `npm install` builds (prepare), and `npm link`
 * (prepare again) and `npm run demo` reuse that build while the sources it
 * was made from are unchanged (scripts/build.js). Checked on a project of
 * its own: whether a build is fresh follows every change of what it is
 * built from, and only that.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isFresh, markFresh } from '../../scripts/build-freshness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A project with sources, configuration and the outputs of a build. */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'fitq-build-'));
  for (const [path, text] of Object.entries({
    'src/index.ts': 'export const a = 1;\n',
    'src/queue/lua/x.lua': 'return 1\n',
    'tsconfig.json': '{}\n',
    'tsconfig.build.json': '{}\n',
    'package.json': '{"name":"p"}\n',
    'package-lock.json': '{}\n',
    'scripts/build.js': '// build\n',
    'scripts/build-freshness.js': '// freshness\n',
    'scripts/cli-bundle.js': '// bundle\n',
    'scripts/oclif-manifest.js': '// manifest\n',
    'dist/index.js': 'export const a = 1;\n',
    'dist/cli-bundle/oclif.js': 'export {};\n',
    'oclif.manifest.json': '{}\n',
  })) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('a build is reused while its sources are unchanged', () => {
  it('is fresh once marked, and stale after any change to what it is built from', () => {
    const root = project();
    expect(isFresh(root)).toBe(false); // never marked: built by something else
    markFresh(root);
    expect(isFresh(root)).toBe(true);

    const changes: [string, (path: string) => void][] = [
      ['src/index.ts', (path) => writeFileSync(path, 'export const a = 2;\n')],
      ['src/queue/lua/x.lua', (path) => writeFileSync(path, 'return 2\n')],
      ['src/new.ts', (path) => writeFileSync(path, 'export {};\n')],
      ['src/index.ts', (path) => rmSync(path)],
      ['tsconfig.build.json', (path) => writeFileSync(path, '{"x":1}\n')],
      ['package-lock.json', (path) => writeFileSync(path, '{"lockfileVersion":3}\n')],
      ['scripts/cli-bundle.js', (path) => writeFileSync(path, '// changed\n')],
      ['scripts/oclif-manifest.js', (path) => writeFileSync(path, '// changed\n')],
    ];
    for (const [path, change] of changes) {
      change(join(root, path));
      expect(isFresh(root), `after changing ${path}`).toBe(false);
      markFresh(root);
      expect(isFresh(root)).toBe(true);
    }
    // What a build makes, gone: not fresh.
    for (const output of ['dist/index.js', 'dist/cli-bundle/oclif.js', 'oclif.manifest.json']) {
      const saved = readFileSync(join(root, output));
      rmSync(join(root, output));
      expect(isFresh(root), `without ${output}`).toBe(false);
      writeFileSync(join(root, output), saved);
      expect(isFresh(root)).toBe(true);
    }
    // Touching a file without changing it keeps it fresh (a checkout rewrites files).
    writeFileSync(join(root, 'src/new.ts'), 'export {};\n');
    expect(isFresh(root)).toBe(true);
  });

  it('npm install builds (prepare), npm link and npm run demo reuse that build: one build, said so', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.prepare).toBe('node scripts/build.js --if-changed');
    expect(scripts.demo).toMatch(/^node scripts\/build\.js --if-changed && /);
    // The real project, built by the test run: reused, in a moment, and said so.
    const reuse = spawnSync(process.execPath, [join(ROOT, 'scripts/build.js'), '--if-changed', '--dry-run'], { cwd: ROOT, encoding: 'utf8' });
    expect(reuse.status, reuse.stderr).toBe(0);
    expect(reuse.stdout.trim()).toMatch(/^fitq: dist\/ is up to date with src\/: not built again \(npm run build builds anyway\)$|^fitq: would build: /);
  });
});
