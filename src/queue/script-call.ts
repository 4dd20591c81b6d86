/**
 * How a script is called: registered on a connection (EVALSHA, the script
 * sent once when Redis lacks it), or, for those that only read, with
 * EVALSHA_RO; its KEYS built from the names at its top (lua-source.ts) and
 * the namespace's keys (keys.ts). scripts.ts gives each script a typed
 * method on top of this.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisConnection } from '../redis/connection.js';
import { keyPart, namespaceKey, type KeyName, type NamespaceKeys } from './keys.js';
import { luaScript, type LuaScript } from './lua-source.js';

/**
 * Scripts queued in a pipeline (MULTI): a pipeline knows only the commands
 * its connection had when it was made, so these are registered with a
 * connection up front (defineScripts); the others when first called.
 */
const PIPELINED_SCRIPTS: readonly string[] = ['stageRuns'];

/** A script's arguments: KEYS then ARGV, in one array (a call spreading 100,000 run ids overflows the stack). */
type ScriptCall = (args: readonly (string | number)[]) => Promise<unknown>;

/** An argument of a script call (Scripts.call): a value, or a list of them (run ids) passed on as they are, never spread. */
export type ScriptArg = string | number | readonly (string | number)[];

function scriptNamed(name: string): LuaScript {
  const script = luaScript(name);
  if (!script) throw new Error(`no Lua script named ${name}`);
  return script;
}

/** Registers a script as a command of a connection, once (its Lua is built when first needed: a command runs a few scripts of many). */
function defineScript(redis: RedisConnection, script: LuaScript): void {
  if (typeof (redis as unknown as Record<string, unknown>)[script.command] === 'function') return;
  redis.defineCommand(script.command, { numberOfKeys: script.numberOfKeys, lua: script.lua });
}

export function scriptCommand(redis: RedisConnection | ChainableCommander, name: string): ScriptCall {
  const script = scriptNamed(name);
  // The scripts that only read (`#!lua flags=no-writes`) go by EVALSHA_RO (EVAL_RO the first time): Redis refuses
  // any write in them, and a Redis user allowed to read only, without EVAL, may run them (docs/security.md).
  if (script.readOnly) return readOnlyCall(redis as RedisConnection, script);
  if (!('isPipeline' in redis && redis.isPipeline)) defineScript(redis as RedisConnection, script);
  const fn = (redis as unknown as Record<string, ScriptCall | undefined>)[script.command];
  if (!fn) throw new Error(`script ${script.command} is not defined on this connection (a pipeline's scripts are PIPELINED_SCRIPTS)`);
  // ioredis flattens one array argument into the command's arguments.
  return (args) => (fn as unknown as (args: readonly (string | number)[]) => Promise<unknown>).call(redis, args);
}

/** A read-only script's call: by its SHA, sending the script only when RedisConnection lacks it (NOSCRIPT). */
function readOnlyCall(redis: RedisConnection, source: LuaScript): ScriptCall {
  return async (args) => {
    try {
      return await redis.call('EVALSHA_RO', [source.sha, source.numberOfKeys, ...args]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.call('EVAL_RO', [source.lua, source.numberOfKeys, ...args]);
    }
  };
}

/** Registers the scripts pipelines queue on a connection, before any pipeline of it is made (idempotent). */
export function defineScripts(redis: RedisConnection): void {
  for (const name of PIPELINED_SCRIPTS) defineScript(redis, scriptNamed(name));
}

/** What a script call is about, for the keys it is passed that are built from data: a run's, a worker's. */
export interface KeySubject {
  runId?: string;
  worker?: string;
}

/** A script's KEYS in a namespace: each a key, or for a key built from data, what it is built from. */
type KeyPlan = readonly (string | { name: KeyName; part: string })[];

/** Key plans by namespace base and script name, made once each. */
const keyPlans = new Map<string, KeyPlan>();

function keyPlanOf(base: string, script: LuaScript): KeyPlan {
  const id = `${base}\n${script.name}`;
  let plan = keyPlans.get(id);
  if (plan === undefined) {
    plan = script.keyNames.map((name) => {
      const part = keyPart(name);
      return part === undefined ? namespaceKey(base, name) : { name, part };
    });
    keyPlans.set(id, plan);
  }
  return plan;
}

/**
 * A script's KEYS for one call, as its top names them (`local poolUsedKey =
 * KEYS[3]`): the namespace's keys, and those of the run or worker the call
 * is about.
 */
export function scriptKeys(keys: NamespaceKeys, name: string, subject: KeySubject = {}): string[] {
  const script = scriptNamed(name);
  return keyPlanOf(keys.base, script).map((key) => {
    if (typeof key === 'string') return key;
    const value = key.part === 'runId' ? subject.runId : key.part === 'name' ? subject.worker : undefined;
    if (value === undefined) throw new Error(`script ${script.file} takes the key ${key.name} in KEYS: the call names no ${key.part}`);
    return namespaceKey(keys.base, key.name, value);
  });
}
