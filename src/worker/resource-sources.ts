/**
 * A worker's capacity from three places, as Dask users expect: flags win
 * over the environment, the environment over the config file, name by name.
 *
 * - flags: `fitq worker -r "gpu=2 mem=64G"`
 * - environment: `FITQ_RESOURCES="gpu=2 mem=64G"` and `FITQ_RESOURCES__GPU=2`
 *   (the name after `__` is lowercased; a per-name variable wins over FITQ_RESOURCES)
 * - config file: `$FITQ_CONFIG`, else `$XDG_CONFIG_HOME/fitq/config.json`, else
 *   `~/.config/fitq/config.json`: `{"worker": {"resources": {"gpu": 2, "mem": "64G"}}}`
 *   (or `"resources": "gpu=2 mem=64G"`)
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { InvalidResourceSpecError, parseResourceSpecs, sortResources, type Resources } from '../resources/spec.js';

export interface SourcedResources {
  resources: Resources;
  /** Where each resource's value came from, e.g. "FITQ_RESOURCES__GPU". */
  sources: Map<string, string>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FITQ_CONFIG) return env.FITQ_CONFIG;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'fitq', 'config.json');
}

/** Parses specs, keeping zeros (a zero overrides a lower layer); errors say where the spec came from. */
function parseFrom(origin: string, specs: readonly string[]): Resources {
  try {
    return parseResourceSpecs(specs, { keepZero: true });
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${error.message} (from ${origin})`, { cause: error });
    throw error;
  }
}

function fromConfigFile(path: string, required: boolean): Resources {
  if (!existsSync(path)) {
    if (required) throw new UsageError(`config file '${path}' (FITQ_CONFIG) does not exist`);
    return new Map();
  }
  let config: { worker?: { resources?: unknown } };
  try {
    config = JSON.parse(readFileSync(path, 'utf8')) as typeof config;
  } catch (error) {
    throw new UsageError(`config file '${path}' is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const resources = config?.worker?.resources;
  if (resources === undefined) return new Map();
  if (typeof resources === 'string') return parseFrom(path, [resources]);
  if (typeof resources === 'object' && resources !== null && !Array.isArray(resources)) {
    return parseFrom(path, Object.entries(resources).map(([name, value]) => `${name}=${String(value)}`));
  }
  throw new UsageError(`config file '${path}': worker.resources must be an object or a spec string`);
}

function fromEnvironment(env: NodeJS.ProcessEnv): { resources: Map<string, bigint>; sources: Map<string, string> } {
  const resources = new Map<string, bigint>();
  const sources = new Map<string, string>();
  if (env.FITQ_RESOURCES) {
    for (const [name, amount] of parseFrom('FITQ_RESOURCES', [env.FITQ_RESOURCES])) {
      resources.set(name, amount);
      sources.set(name, 'FITQ_RESOURCES');
    }
  }
  for (const [variable, value] of Object.entries(env)) {
    const match = /^FITQ_RESOURCES__(.+)$/.exec(variable);
    if (!match || value === undefined) continue;
    const name = match[1]!.toLowerCase();
    const part = `${name}=${value}`;
    // The value is one amount: "1 cpu=64" must not slip in another resource.
    if (/[\s,]/.test(value.trim())) throw new InvalidResourceSpecError(part, `expected one amount (from ${variable})`);
    const amount = parseFrom(variable, [part]).get(name);
    if (amount === undefined) throw new InvalidResourceSpecError(part, `expected one amount (from ${variable})`);
    resources.set(name, amount);
    sources.set(name, variable);
  }
  return { resources, sources };
}

/** Merges the three sources, flags first. */
export function resolveWorkerResources(flagSpecs: readonly string[], env: NodeJS.ProcessEnv = process.env): SourcedResources {
  const path = configPath(env);
  const layers: [string, Map<string, bigint> | Resources, Map<string, string>?][] = [
    [`config file ${path}`, fromConfigFile(path, Boolean(env.FITQ_CONFIG))],
  ];
  const environment = fromEnvironment(env);
  layers.push(['environment', environment.resources, environment.sources]);
  layers.push(['-r/--resources', parseResourceSpecs(flagSpecs, { keepZero: true })]);
  const resources = new Map<string, bigint>();
  const sources = new Map<string, string>();
  for (const [origin, layer, layerSources] of layers) {
    for (const [name, amount] of layer) {
      resources.set(name, amount);
      sources.set(name, layerSources?.get(name) ?? origin);
    }
  }
  // Zero means none: it overrides a lower layer, then goes.
  for (const [name, amount] of resources) {
    if (amount === 0n) {
      resources.delete(name);
      sources.delete(name);
    }
  }
  return { resources: sortResources(resources), sources };
}
