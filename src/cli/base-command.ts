/**
 * What every fitq command shares: connection flags, one-line errors (exit 2
 * for user mistakes, 1 when Redis is unreachable) and no stack traces for them.
 */
import { Command, Flags } from '@oclif/core';
import { ConnectionError, UsageError } from '../errors.js';
import { FitqClient } from '../queue/client.js';

export abstract class FitqCommand extends Command {
  static override baseFlags = {
    'redis-url': Flags.string({
      summary: 'Redis URL (default: FITQ_REDIS_URL, REDIS_URL, redis://127.0.0.1:6379).',
      helpGroup: 'CONNECTION',
    }),
    queue: Flags.string({
      summary: 'Namespace of runs and workers (default: FITQ_QUEUE or "default").',
      helpGroup: 'CONNECTION',
    }),
  };

  /** Connects, runs fn with a client, always closes. */
  protected async withClient<T>(
    flags: { 'redis-url'?: string | undefined; queue?: string | undefined },
    fn: (client: FitqClient) => Promise<T>,
  ): Promise<T> {
    const client = await FitqClient.connect({ redisUrl: flags['redis-url'], queue: flags.queue });
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }

  protected override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (error instanceof UsageError || error instanceof ConnectionError) {
      process.stderr.write(`Error: ${error.message}\n`);
      return this.exit(error.exitCode);
    }
    return super.catch(error);
  }
}

/** Parses repeated KEY=VALUE flags into an object; a key given twice is an error. */
export function parseKeyValues(flag: string, values: readonly string[] | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of values ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid ${flag} '${entry}': expected KEY=VALUE`);
    const key = entry.slice(0, eq);
    if (key in result) throw new UsageError(`invalid ${flag} '${entry}': '${key}' given twice`);
    result[key] = entry.slice(eq + 1);
  }
  return result;
}
