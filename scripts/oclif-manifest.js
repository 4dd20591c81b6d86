// Writes oclif.manifest.json from the built commands (run by `npm run build`):
// with it, oclif reads every command's flags and help from one file instead
// of importing every command module at each start, which halves the time a
// `fitq` command takes to start. Generated, never edited: .gitignore has it.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
writeFileSync(new URL('../oclif.manifest.json', import.meta.url), `${JSON.stringify(plugin.manifest)}\n`);
