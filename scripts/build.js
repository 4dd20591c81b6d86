#!/usr/bin/env node
// Builds fitq: TypeScript to dist/, the Lua scripts beside it, the CLI's
// bundles (scripts/cli-bundle.js), oclif's manifest
// (scripts/oclif-manifest.js); then records the digest of the
// sources it was built from (scripts/build-freshness.js).
//   --if-changed  reuse a build made from the sources as they are now:
//                 `npm install` builds (prepare), `npm link` (prepare again)
//                 and `npm run demo` reuse it, so installing builds once
//   --dry-run     say whether it would build, and build nothing
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFresh, markFresh, sourcesDigest } from './build-freshness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FLAGS = ['--if-changed', '--dry-run'];
const args = process.argv.slice(2);
const unknown = args.find((arg) => !FLAGS.includes(arg));
if (unknown !== undefined) {
  console.error(`Error: unknown flag '${unknown}' (expected ${FLAGS.join(' or ')})`);
  process.exit(2);
}
const ifChanged = args.includes('--if-changed');
const dryRun = args.includes('--dry-run');

if (ifChanged && isFresh(root)) {
  console.log('fitq: dist/ is up to date with src/: not built again (npm run build builds anyway)');
  process.exit(0);
}
if (dryRun) {
  console.log(`fitq: would build: ${ifChanged ? 'dist/ is missing or older than src/' : 'asked to build'}`);
  process.exit(0);
}

/** Runs a Node script to its end; a failure ends the build with its code. */
function run(script, scriptArgs) {
  const result = spawnSync(process.execPath, [script, ...scriptArgs], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// Taken before building: a source changed meanwhile leaves the build stale.
const digest = sourcesDigest(root);
run(createRequire(import.meta.url).resolve('typescript/bin/tsc'), ['-p', 'tsconfig.build.json']);
rmSync(join(root, 'dist/queue/lua'), { recursive: true, force: true });
cpSync(join(root, 'src/queue/lua'), join(root, 'dist/queue/lua'), { recursive: true });
// The spawn helper and its watchdog are plain JavaScript, run as they are (src/worker/spawner/*.js).
for (const file of ['helper.js', 'watchdog.js']) cpSync(join(root, 'src/worker/spawner', file), join(root, 'dist/worker/spawner', file));
run(join(root, 'scripts/cli-bundle.js'), []);
run(join(root, 'scripts/oclif-manifest.js'), []);
markFresh(root, digest);
