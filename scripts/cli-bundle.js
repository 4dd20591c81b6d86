// Bundles what the CLI loads (run by `npm run build`, after tsc), with
// esbuild, into dist/cli-bundle/, which bin/run.js and package.json's
// `oclif` section point at: `fitq runs` then loads three files where it
// loaded 250 modules one at a time (90 ES modules, which Node's loader
// resolves, reads and compiles each, fitq's own; 160 CommonJS ones, oclif's
// and ioredis's with their dependencies).
//   oclif.js    @oclif/core with its dependencies: bin/run.js and every
//               bundle below import this one copy, so oclif's own state
//               (its config cache, its error classes) is shared
//   commands/   one file per command (the layout oclif reads ids from),
//   hooks/        per hook, and help.js: each with the fitq modules it
//   help.js       imports and ioredis; other packages stay in node_modules
// dist/ itself stays as tsc writes it: the library API (dist/index.js) and
// what tests and benchmarks import.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const out = join(dist, 'cli-bundle');
const OCLIF_BUNDLE = join(out, 'oclif.js');

/** Packages bundled into the commands, with everything they import. */
const BUNDLED_PACKAGES = new Set(['ioredis']);

/**
 * A bundle that loads bullmq keeps the ioredis of node_modules: bullmq's
 * Queue is handed fitq's own connection (dashboard/bull-board.ts), and
 * bullmq imports node_modules' ioredis itself.
 */
const SHARES_IOREDIS_WITH = 'bullmq';

/** CommonJS code in an ES module bundle still calls `require` (for Node's built-in modules): it is given one. */
const REQUIRE_BANNER = "import { createRequire as __fitqCreateRequire } from 'node:module';\nconst require = __fitqCreateRequire(import.meta.url);";

const COMMON = { bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning', banner: { js: REQUIRE_BANNER } };

/** What oclif loads from dist/: every command, the hooks, the help class. */
function entries() {
  const commands = readdirSync(join(dist, 'commands'), { recursive: true })
    .filter((file) => file.endsWith('.js'))
    .map((file) => join('commands', file));
  const hooks = readdirSync(join(dist, 'hooks'))
    .filter((file) => file.endsWith('.js'))
    .map((file) => join('hooks', file));
  return [...commands, ...hooks, 'help.js'];
}

/** A path from a bundle to a file, as an import specifier or a URL relative to the bundle. */
function fromBundle(outfile, path) {
  const specifier = relative(dirname(outfile), path).split('\\').join('/');
  return specifier.startsWith('.') ? specifier : `./${specifier}`;
}

/**
 * Which packages a bundle takes in: those of BUNDLED_PACKAGES (with what
 * they import), @oclif/core as the shared oclif.js; every other package is
 * imported from node_modules as before.
 */
function packagesPlugin(outfile, bundled) {
  return {
    name: 'fitq-packages',
    setup(bundle) {
      bundle.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        if (args.path === '@oclif/core') return { path: fromBundle(outfile, OCLIF_BUNDLE), external: true };
        // A second copy of oclif would not share the first one's state.
        if (args.path.startsWith('@oclif/core/')) return { errors: [{ text: `import '${args.path}' from '@oclif/core' itself: the CLI has one bundled oclif` }] };
        if (args.importer.includes('/node_modules/') || bundled.has(args.path)) return undefined;
        return { path: args.path, external: true };
      });
    },
  };
}

/**
 * A module that finds files beside itself (`new URL('./lua/', import.meta.url)`:
 * queue/lua-source.ts, worker/spawner/spawner.ts) keeps finding them once
 * bundled: its `import.meta.url` becomes its own place in dist/, reached
 * from the bundle's place, so dist/ can be moved as a whole.
 */
function ownModuleUrlPlugin(outfile) {
  return {
    name: 'fitq-own-module-url',
    setup(bundle) {
      bundle.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(`${dist}/`)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const url = `new URL(${JSON.stringify(fromBundle(outfile, args.path))}, import.meta.url).href`;
        return { contents: text.replaceAll('import.meta.url', url), loader: 'js' };
      });
    },
  };
}

rmSync(out, { recursive: true, force: true });

// oclif.js: every name @oclif/core exports (named, so ES module imports of
// them work), and `Exit` from @oclif/core/handle, which the tests replace to
// run commands in their own process (test/support/in-process-cli.ts).
const oclifNames = Object.keys(createRequire(import.meta.url)('@oclif/core')).filter((name) => name !== '__esModule');
await build({
  ...COMMON,
  stdin: { contents: `export { ${oclifNames.join(', ')} } from '@oclif/core';\nexport { Exit } from '@oclif/core/handle';\n`, resolveDir: root, loader: 'js' },
  outfile: OCLIF_BUNDLE,
  // Loaded only to run commands written in TypeScript, which fitq's are not.
  external: ['typescript', 'ts-node', 'tsx'],
});

/** Bundles one entry; one that loads bullmq is bundled again without ioredis (SHARES_IOREDIS_WITH). */
async function bundleEntry(entry) {
  const outfile = join(out, entry);
  const options = { ...COMMON, entryPoints: [join(dist, entry)], outfile, metafile: true };
  const built = await build({ ...options, plugins: [packagesPlugin(outfile, BUNDLED_PACKAGES), ownModuleUrlPlugin(outfile)] });
  const imports = Object.values(built.metafile.outputs).flatMap((output) => output.imports);
  if (!imports.some((imported) => imported.external && imported.path === SHARES_IOREDIS_WITH)) return;
  await build({ ...options, plugins: [packagesPlugin(outfile, new Set()), ownModuleUrlPlugin(outfile)] });
}

// One build per entry: each bundle's place is known to ownModuleUrlPlugin;
// entries share no module but oclif.js (one command runs per process).
await Promise.all(entries().map(bundleEntry));
