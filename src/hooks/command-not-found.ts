/**
 * `fitq statsu` or `fitq status`: one line naming the command meant, exit 2,
 * instead of oclif's bare "command not found".
 */
import type { Hook } from '@oclif/core';
import { quote } from '../text/quote.js';
import { closest } from '../cli/suggest.js';
import { EXIT } from '../exit-codes.js';

/** What users of other queues and spoolers type, and the fitq command that does it. */
const FAMILIAR_NAMES: Readonly<Record<string, string>> = {
  status: 'runs',
  ps: 'runs',
  ls: 'runs',
  list: 'runs',
  jobs: 'runs',
  queue: 'runs',
  show: 'runs show',
  submit: 'stage',
  add: 'stage',
  push: 'stage',
  enqueue: 'stage',
  sbatch: 'stage',
  kill: 'cancel',
  scancel: 'cancel',
  abort: 'cancel',
  rm: 'runs rm',
  remove: 'runs rm',
  clean: 'runs clean',
  prune: 'runs clean',
  purge: 'runs clean',
  log: 'logs',
  tail: 'logs',
  follow: 'logs',
  start: 'worker',
  daemon: 'worker',
  agent: 'worker',
  nodes: 'workers',
  hosts: 'workers',
  shutdown: 'stop',
};

/**
 * The command meant by the longest start of what was typed that is close to
 * one (oclif's id can include the arguments: `runs shwo ID`).
 */
export function suggestCommand(typedWords: readonly string[], commands: readonly string[]): { typed: string; suggestion: string } | undefined {
  for (let length = typedWords.length; length > 0; length--) {
    const typed = typedWords.slice(0, length).join(' ');
    const others = commands.filter((command) => command !== typed);
    const familiar = closest(typed, Object.keys(FAMILIAR_NAMES));
    const suggestion = closest(typed, others) ?? (familiar === undefined ? undefined : FAMILIAR_NAMES[familiar]);
    if (suggestion !== undefined) return { typed, suggestion };
  }
  return undefined;
}

const hook: Hook.CommandNotFound = async function ({ config, id }) {
  const words = id.split(':');
  const found = suggestCommand(words, config.commandIDs.map((command) => command.replaceAll(':', ' ')));
  const message = found
    ? `command ${quote(found.typed)} not found; did you mean ${quote(found.suggestion)}?`
    : `command ${quote(words.join(' '))} not found; see ${config.bin} --help`;
  process.stderr.write(`Error: ${message}\n`);
  this.exit(EXIT.usage);
};

export default hook;
