/**
 * Shell completion: the words a shell's TAB may complete `fitq …` with,
 * given the words typed so far (the last one being completed). Commands and
 * flags come from oclif's own command table; run ids, worker names and
 * namespaces from Redis, as the words typed name it (`--redis-url`,
 * `--queue`, else the environment). Redis being away completes nothing
 * from it, silently: a TAB never prints an error. The shells' scripts
 * (completion-scripts.ts) call `fitq complete-words` with the words.
 */
import type { Command, Config } from '@oclif/core';

/** Where dynamic candidates come from (Redis, for the real thing). */
export interface CompletionSources {
  runIds(connection: TypedConnection): Promise<string[]>;
  workerNames(connection: TypedConnection): Promise<string[]>;
  namespaces(connection: TypedConnection): Promise<string[]>;
}

/** The connection flags the words typed so far give. */
export interface TypedConnection {
  redisUrl?: string;
  queue?: string;
}

/** Commands whose arguments are runs, and those whose arguments are workers. */
const RUN_COMMANDS = new Set(['cancel', 'hold', 'release', 'restart', 'update', 'wait', 'logs', 'runs:show', 'runs:rm']);
const WORKER_COMMANDS = new Set(['drain', 'undrain', 'stop']);
/** The flags every command that connects takes, each with a value. */
const CONNECTION_FLAGS = new Set(['--redis-url', '--redis-ca', '--redis-cert', '--redis-key', '--queue']);
/** Commands never offered (this one). */
const HIDDEN = new Set(['complete-words']);

/** The candidates for the last word of `words` (the words after `fitq`), sorted, each once. */
export async function completeWords(config: Config, words: readonly string[], sources: CompletionSources): Promise<string[]> {
  const typed = words.slice(0, -1);
  const current = words[words.length - 1] ?? '';
  const { command, consumed } = commandOf(config, typed);
  const startsWith = (list: Iterable<string>) => [...new Set([...list].filter((word) => word.startsWith(current)))].sort();
  if (command === undefined) {
    // A topic or command: the next word of every command id under what is typed.
    const prefix = typed.slice(0, consumed).join(':');
    const next = config.commands
      .filter((entry) => !entry.hidden && !HIDDEN.has(entry.id) && (prefix === '' || entry.id.startsWith(`${prefix}:`)))
      .map((entry) => entry.id.split(':')[consumed]!)
      .filter((word) => word !== undefined);
    return startsWith(next);
  }
  const flags = command.flags ?? {};
  const connection = typedConnection(typed);
  const previous = typed[typed.length - 1];
  const valueOf = previous?.startsWith('--') && !previous.includes('=') ? flags[previous.slice(2)] : undefined;
  if (valueOf !== undefined && valueOf.type === 'option') {
    if (previous === '--queue') return startsWith(await quietly(sources.namespaces(connection)));
    if (valueOf.options) return startsWith(valueOf.options);
    return [];
  }
  if (current.startsWith('-')) {
    return startsWith(Object.entries(flags).flatMap(([name, flag]) => [
      `--${name}`,
      ...(flag.type === 'boolean' && flag.allowNo ? [`--no-${name}`] : []),
    ]));
  }
  // A command that is a topic too (`runs`: `runs show`, `runs rm`): its subcommands.
  const subcommands = config.commands
    .filter((entry) => !entry.hidden && entry.id.startsWith(`${command.id}:`) && typed.length === consumed)
    .map((entry) => entry.id.split(':')[consumed]!);
  if (RUN_COMMANDS.has(command.id)) return startsWith([...subcommands, ...(await quietly(sources.runIds(connection)))]);
  if (WORKER_COMMANDS.has(command.id)) return startsWith([...subcommands, ...(await quietly(sources.workerNames(connection)))]);
  // Else what its first argument may be, when the command lists it (`completion bash|zsh|fish`).
  const options = Object.values(command.args ?? {}).find((arg) => arg.options !== undefined)?.options ?? [];
  return startsWith([...subcommands, ...options]);
}

/** The command the typed words name (longest id first), and how many words name it or the topic typed so far. */
function commandOf(config: Config, typed: readonly string[]): { command: Command.Loadable | undefined; consumed: number } {
  // (The connection flags may come first, with their values: `fitq --queue q cancel`.)
  const words = typed.filter((word, i) => !word.startsWith('-') && !CONNECTION_FLAGS.has(typed[i - 1] ?? ''));
  for (let length = Math.min(words.length, 3); length > 0; length--) {
    const id = words.slice(0, length).join(':');
    const command = config.findCommand(id);
    if (command && !HIDDEN.has(id)) return { command, consumed: length };
  }
  const topic = words.length > 0 && config.commands.some((entry) => entry.id.startsWith(`${words[0]}:`)) ? 1 : 0;
  return { command: undefined, consumed: topic };
}

/** `--redis-url` and `--queue` as typed (`--queue x` or `--queue=x`). */
function typedConnection(typed: readonly string[]): TypedConnection {
  const found: TypedConnection = {};
  typed.forEach((word, i) => {
    for (const [flag, key] of [['--redis-url', 'redisUrl'], ['--queue', 'queue']] as const) {
      if (word === flag && typed[i + 1] !== undefined) found[key] = typed[i + 1];
      else if (word.startsWith(`${flag}=`)) found[key] = word.slice(flag.length + 1);
    }
  });
  return found;
}

/** A source's candidates, or none when it fails (Redis away, a bad URL): a TAB never prints an error. */
async function quietly(candidates: Promise<string[]>): Promise<string[]> {
  try {
    return await candidates;
  } catch {
    return [];
  }
}
