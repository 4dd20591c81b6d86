#!/usr/bin/env node
// oclif checks the Node version against its own engines (>=18) when it is
// imported, loading semver to do so: about 10 ms of every command. fitq's
// engines (>=20.5) are stricter, so that check says nothing more; it is
// skipped, and the variable put back as it was so runs never inherit it.
// oclif comes bundled with its dependencies (scripts/cli-bundle.js), the
// copy every command of dist/cli-bundle/ imports.
const given = process.env.OCLIF_DISABLE_ENGINE_WARNING;
process.env.OCLIF_DISABLE_ENGINE_WARNING = '1';
const { execute } = await import('../dist/cli-bundle/oclif.js');
if (given === undefined) delete process.env.OCLIF_DISABLE_ENGINE_WARNING;
else process.env.OCLIF_DISABLE_ENGINE_WARNING = given;

await execute({ dir: import.meta.url });
