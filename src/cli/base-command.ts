/**
 * What every fitq command shares: connection flags, one-line errors (exit 2
 * for user mistakes, 1 when Redis is unreachable) and no stack traces for them.
 */
import { Command, Flags } from '@oclif/core';
import { ConnectionError, TimeoutError, UsageError } from '../errors.js';
import { oneLine, quote } from '../queue/names.js';
import { FitqClient, type ClientOptions } from '../queue/client.js';
import { describeAclRefusal, type ConnectionOptions } from '../queue/connection.js';
import { resolveTlsOptions } from '../queue/tls-options.js';
import { closest } from './suggest.js';

/** The connection flags every command has. */
export interface ConnectionFlags {
  'redis-url'?: string | undefined;
  'redis-ca'?: string | undefined;
  'redis-cert'?: string | undefined;
  'redis-key'?: string | undefined;
  queue?: string | undefined;
}

export abstract class FitqCommand extends Command {
  static override baseFlags = {
    'redis-url': Flags.string({
      summary: 'Redis URL (default: FITQ_REDIS_URL, REDIS_URL, redis://127.0.0.1:6379).',
      helpGroup: 'CONNECTION',
    }),
    'redis-ca': Flags.string({
      summary: 'CA certificate (PEM file) to verify a rediss:// server with (default: FITQ_REDIS_CA, else the system CAs).',
      helpGroup: 'CONNECTION',
    }),
    'redis-cert': Flags.string({
      summary: 'Client certificate (PEM file) for a rediss:// server that requires one; with --redis-key (default: FITQ_REDIS_CERT).',
      helpGroup: 'CONNECTION',
    }),
    'redis-key': Flags.string({
      summary: 'Private key (PEM file) of --redis-cert (default: FITQ_REDIS_KEY).',
      helpGroup: 'CONNECTION',
    }),
    queue: Flags.string({
      summary: 'Namespace of runs and workers (default: FITQ_QUEUE or "default").',
      helpGroup: 'CONNECTION',
    }),
  };

  /** URL and TLS options from the flags and their environment fallbacks; UsageError for bad TLS files. */
  protected connectionOptions(flags: ConnectionFlags): ConnectionOptions {
    const redisUrl = flags['redis-url'];
    const tls = { ca: flags['redis-ca'], cert: flags['redis-cert'], key: flags['redis-key'] };
    return { redisUrl, redisOptions: resolveTlsOptions(redisUrl, tls) };
  }

  /**
   * Connects (with any further client options, e.g. a secret), runs fn with
   * a client, always closes. Warns on stderr, in one line, when Redis may
   * evict keys (connection.ts, evictionProblem), and when the Redis user
   * may only read (client.ts, READ_ONLY_NOTE).
   */
  protected async withClient<T>(
    flags: ConnectionFlags,
    fn: (client: FitqClient) => Promise<T>,
    options: Omit<ClientOptions, 'redisUrl' | 'redisOptions' | 'queue'> = {},
  ): Promise<T> {
    const onNote = (note: string) => process.stderr.write(`Warning: ${oneLine(note)}\n`);
    const client = await FitqClient.connect({ ...this.connectionOptions(flags), evictionCheck: 'warn', queue: flags.queue, onNote, ...options });
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }

  protected override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (error instanceof UsageError || error instanceof ConnectionError || error instanceof TimeoutError) {
      process.stderr.write(`Error: ${oneLine(error.message)}\n`);
      return this.exit(error.exitCode);
    }
    const parseError = oclifParseError(error, this.flagNames());
    if (parseError) {
      const hint = this.parseErrorHint(error);
      process.stderr.write(`Error: ${oneLine(parseError)}${hint ? `; ${hint}` : ''}\n`);
      return this.exit(2);
    }
    const refusal = describeAclRefusal(error);
    if (refusal) {
      process.stderr.write(`Error: ${oneLine(refusal)}\n`);
      return this.exit(1);
    }
    return super.catch(error);
  }

  /** A hint added to oclif's flag and argument errors; `fitq stage` adds one about '--'. */
  protected parseErrorHint(_error: Error): string | undefined {
    return undefined;
  }

  /** This command's long flag names, for "did you mean". */
  private flagNames(): string[] {
    return Object.keys({ ...this.ctor.baseFlags, ...this.ctor.flags });
  }
}

/** `Nonexistent flag: --x`, with the closest real flag for each unknown one. */
function describeUnknownFlags(typed: readonly string[], known: readonly string[]): string {
  const suggestions = typed.flatMap((flag) => {
    const name = /^--([^=]+)/.exec(flag)?.[1];
    const match = name === undefined ? undefined : closest(name, known);
    return match === undefined ? [] : [`--${match}`];
  });
  const message = `Nonexistent flag${typed.length === 1 ? '' : 's'}: ${typed.join(', ')}`;
  return suggestions.length > 0 ? `${message} (did you mean ${suggestions.join(', ')}?)` : message;
}

/**
 * oclif's own flag and argument errors (unknown flag, bad option, missing
 * argument) as one line; they are user mistakes, so exit 2.
 */
function oclifParseError(error: Error & { oclif?: { exit?: number }; flags?: unknown }, knownFlags: readonly string[]): string | undefined {
  const parserErrors = ['RequiredArgsError', 'NonExistentFlagsError', 'UnexpectedArgsError', 'FlagInvalidOptionError', 'ArgInvalidOptionError', 'FailedFlagValidationError', 'CLIParseError', 'CLIError'];
  if (!parserErrors.includes(error.constructor.name) || error.oclif?.exit !== 2) return undefined;
  if (error.constructor.name === 'NonExistentFlagsError' && Array.isArray(error.flags)) {
    return describeUnknownFlags(error.flags.map(String), knownFlags);
  }
  const lines = error.message
    .split('\n')
    .map((line) => line.replace(/^[\s›]+/, '').trim())
    .filter((line) => line !== '' && !/^See more help with/.test(line) && !/^The following errors? occurred:?$/.test(line));
  return lines.join(' ').replace(/\s+/g, ' ') || 'invalid arguments (see --help)';
}

/** Parses repeated KEY=VALUE flags into an object; a key given twice is an error. */
export function parseKeyValues(flag: string, values: readonly string[] | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of values ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid ${flag} ${quote(entry)}: expected KEY=VALUE`);
    const key = entry.slice(0, eq);
    // Own keys only: `constructor` or `__proto__` are names like any other.
    if (Object.hasOwn(result, key)) throw new UsageError(`invalid ${flag} ${quote(entry)}: ${quote(key)} given twice`);
    Object.defineProperty(result, key, { value: entry.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return result;
}
