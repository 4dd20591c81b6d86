// Whether dist/ (and oclif.manifest.json) was built from the sources as they
// are now: a digest of every file a build reads is kept beside what it
// wrote, so `npm link` and `npm run demo` reuse the build `npm install` made
// (scripts/build.js --if-changed). By content, not by time: a checkout that
// rewrites a file without changing it keeps the build.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What a build reads: the sources, their configuration, the dependencies' versions, and the build itself. */
const INPUTS = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  'scripts/build.js',
  'scripts/build-freshness.js',
  'scripts/cli-bundle.js',
  'scripts/oclif-manifest.js',
];

/** What a build writes; the digest of its inputs goes beside them. */
const OUTPUTS = ['dist/index.js', 'dist/cli-bundle/oclif.js', 'oclif.manifest.json'];
const DIGEST_FILE = 'dist/.sources-digest';

/** Every file under a path (a file: itself), sorted. */
function filesUnder(root, path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  try {
    return readdirSync(full, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)))
      .sort();
  } catch (error) {
    if (error.code === 'ENOTDIR') return [path];
    throw error;
  }
}

/** A digest of every input file's path and content. */
export function sourcesDigest(root) {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((path) => filesUnder(root, path))) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Whether the build in `root` was made from its sources as they are now. */
export function isFresh(root) {
  if (!OUTPUTS.every((output) => existsSync(join(root, output)))) return false;
  const digest = join(root, DIGEST_FILE);
  return existsSync(digest) && readFileSync(digest, 'utf8').trim() === sourcesDigest(root);
}

/** Records that the build in `root` was made from sources of this digest (default: as they are now). */
export function markFresh(root, digest = sourcesDigest(root)) {
  writeFileSync(join(root, DIGEST_FILE), `${digest}\n`);
}
