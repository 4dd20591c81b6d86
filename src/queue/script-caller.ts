/**
 * What every typed script call shares: the namespace's connection and
 * keys, and the one way a script is called (its KEYS as its top names them,
 * then its ARGV). The calls themselves are grouped by concern:
 * settings-scripts.ts, worker-scripts.ts, scripts.ts.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { NamespaceKeys } from './keys.js';
import { scriptCommand, defineScripts, scriptKeys, type KeySubject, type ScriptArg } from './script-call.js';

export class ScriptCaller {
  constructor(
    protected readonly redis: RedisConnection,
    protected readonly keys: NamespaceKeys,
    protected readonly logMaxLines: number,
  ) {
    defineScripts(redis);
  }

  /** Calls a script: its KEYS as its top names them (see scriptKeys), then `args`, its ARGV. */
  protected call(name: string, subject: KeySubject, ...args: ScriptArg[]): Promise<unknown> {
    return scriptCommand(this.redis, name)([...scriptKeys(this.keys, name, subject), ...args].flat());
  }
}
