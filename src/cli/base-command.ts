/**
 * What every fitq command shares: connection flags, one-line errors (exit 2
 * for user mistakes, 1 when Redis is unreachable or refuses a command: an ACL
 * without a permission, out of memory) and no stack traces for them.
 */
import { Command, Flags } from '@oclif/core';
import { ConnectionError, GpuDriverError, HostSupportError, StoredDataError, TimeoutError, UnreplicatedError, UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { oneLine, quote, quoteBytes } from '../text/quote.js';
import { FitqClient, type ClientOptions } from '../client.js';
import { resolveRedisUrl, type ConnectionOptions } from '../redis/connection.js';
import { describeAclRefusal, describeClusterStall, describeOutOfMemory } from '../redis/refusals.js';
import { parseRedisUrl } from '../redis/redis-url.js';
import { resolveTlsOptions } from '../redis/tls-options.js';
import { findNonUtf8Word } from './raw-argv.js';
import { closest } from './suggest.js';

/**
 * Most words any fitq command gives oclif's parser (flags, their values and
 * arguments): more than 100 labels and a few demands need, or 500 run ids
 * and some flags. oclif's parsing takes time quadratic in the words it is
 * given (it copies a flag's list of values for each value, and looks up each
 * argument's position among all the words: 40,000 run ids took 16-19 s), so
 * more are refused before it sees them. The command after `fitq stage --`
 * never goes through it.
 */
export const MAX_PARSED_WORDS = 1000;

/** How to give more names than fit: in batches, leaving room for flags. */
export const inBatches = (command: string): string => `in batches (xargs -n ${MAX_PARSED_WORDS / 2} fitq ${command})`;

/** Where a word that is not UTF-8 was typed, for the hint that says what to do instead. */
export interface NonUtf8Place {
  /** After the first `--`. */
  afterSeparator: boolean;
  /** The word as typed, when it could be read. */
  bytes: Buffer | undefined;
}

/** The connection flags every command has. */
export interface ConnectionFlags {
  'redis-url'?: string | undefined;
  'redis-ca'?: string | undefined;
  'redis-cert'?: string | undefined;
  'redis-key'?: string | undefined;
  queue?: string | undefined;
}

/**
 * What every fitq command shares, whether it talks to Redis or not (`fitq
 * keys init` does not): its refusals of bad words, and its errors as one
 * line with fitq's exit codes.
 */
export abstract class FitqLocalCommand extends Command {
  /**
   * Before any parsing, refuses (exit 2, one line) words that are not UTF-8
   * and more than MAX_PARSED_WORDS words for oclif's parser.
   */
  protected override async init(): Promise<void> {
    await super.init();
    const typed = process.argv.slice(2);
    const nonUtf8 = findNonUtf8Word(typed);
    if (nonUtf8) {
      const word = typed[nonUtf8.index]!;
      const what = nonUtf8.bytes
        ? `argument ${quoteBytes(nonUtf8.bytes)} is not valid UTF-8`
        : `argument ${quote(word)} holds U+FFFD, which may stand for bytes that are not valid UTF-8 (fitq cannot read its arguments as bytes here)`;
      const hint = this.nonUtf8Hint({ afterSeparator: typed.slice(0, nonUtf8.index).includes('--'), bytes: nonUtf8.bytes });
      throw new UsageError(`${what}: ${hint}`);
    }
    const count = this.wordsToParse().length;
    if (count > MAX_PARSED_WORDS) throw new UsageError(this.tooManyWordsMessage(count));
  }

  /** The words this command gives oclif's parser; `fitq stage` gives only those before `--`. */
  protected wordsToParse(): readonly string[] {
    return this.argv;
  }

  /** The refusal of more than MAX_PARSED_WORDS words; commands taking many names add how to select them instead. */
  protected tooManyWordsMessage(count: number): string {
    return `too many arguments: ${count} given, at most ${MAX_PARSED_WORDS}`;
  }

  /** What to do instead of typing a word that is not UTF-8. */
  protected nonUtf8Hint(_place: NonUtf8Place): string {
    return 'fitq takes its arguments as UTF-8 text; give it in UTF-8';
  }

  protected override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (
      error instanceof UsageError ||
      error instanceof ConnectionError ||
      error instanceof TimeoutError ||
      error instanceof StoredDataError ||
      error instanceof UnreplicatedError ||
      error instanceof GpuDriverError ||
      error instanceof HostSupportError
    ) {
      process.stderr.write(`Error: ${oneLine(error.message)}\n`);
      return this.exit(error.exitCode);
    }
    const parseError = oclifParseError(error, this.flagNames());
    if (parseError) {
      const hint = this.parseErrorHint(error);
      process.stderr.write(`Error: ${oneLine(parseError)}${hint ? `; ${hint}` : ''}\n`);
      return this.exit(EXIT.usage);
    }
    const refusal = describeAclRefusal(error) ?? describeOutOfMemory(error) ?? describeClusterStall(error);
    if (refusal) {
      process.stderr.write(`Error: ${oneLine(refusal)}\n`);
      return this.exit(EXIT.failed);
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

/** A command that talks to a namespace in Redis: the connection flags, and a client. */
export abstract class FitqCommand extends FitqLocalCommand {
  static override baseFlags = {
    'redis-url': Flags.string({
      summary: 'Redis URL: redis://, rediss://, redis+sentinel://H:P,…/MASTER or redis+cluster://H:P,… (default: FITQ_REDIS_URL, REDIS_URL, redis://127.0.0.1:6379).',
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
    // A malformed URL is refused before anything starts (a --detach worker included).
    parseRedisUrl(resolveRedisUrl(redisUrl));
    const tls = { ca: flags['redis-ca'], cert: flags['redis-cert'], key: flags['redis-key'] };
    return { redisUrl, redisOptions: resolveTlsOptions(redisUrl, tls) };
  }

  /**
   * Connects (with any further client options, e.g. a secret), runs fn with
   * a client, always closes. Warns on stderr, in one line, when Redis may
   * evict keys (redis/connection.ts, evictionProblem), and when the Redis user
   * may only read (operations/upkeep.ts, READ_ONLY_NOTE).
   */
  protected async withClient<T>(
    flags: ConnectionFlags,
    fn: (client: FitqClient) => Promise<T>,
    options: Omit<ClientOptions, 'redisUrl' | 'queue'> = {},
  ): Promise<T> {
    const onNote = (note: string) => process.stderr.write(`Warning: ${oneLine(note)}\n`);
    const connection = this.connectionOptions(flags);
    // Options of the connection (a retry strategy) go beside the TLS options, not in their place.
    const redisOptions = { ...connection.redisOptions, ...options.redisOptions };
    const client = await FitqClient.connect({ ...connection, evictionCheck: 'warn', queue: flags.queue, onNote, ...options, redisOptions });
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
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
