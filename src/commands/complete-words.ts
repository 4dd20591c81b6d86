import { FitqLocalCommand } from '../cli/base-command.js';
import { completeWords, type CompletionSources, type TypedConnection } from '../cli/completion.js';
import { FitqClient } from '../client.js';
import { resolveNamespace } from '../client-options.js';

/** Namespaces found per TAB at most, and the keys looked at for them: a TAB never scans a whole large Redis. */
const SCAN_CALLS = 10;
const SCAN_COUNT = 1000;

export default class CompleteWords extends FitqLocalCommand {
  static override summary = 'The candidates a shell completes the last word with (fitq completion prints the scripts that call it).';
  static override hidden = true;
  static override strict = false;

  async run(): Promise<void> {
    const words = this.argv[0] === '--' ? this.argv.slice(1) : [...this.argv];
    const candidates = await completeWords(this.config, words, redisSources);
    if (candidates.length > 0) process.stdout.write(`${candidates.join('\n')}\n`);
  }
}

/** Opens a client of the namespace the words name, fails at once when Redis is away, and always closes. */
async function withQuickClient<T>(typed: TypedConnection, fn: (client: FitqClient) => Promise<T>): Promise<T> {
  const client = await FitqClient.connect({
    ...(typed.redisUrl === undefined ? {} : { redisUrl: typed.redisUrl }),
    ...(typed.queue === undefined ? {} : { queue: typed.queue }),
    keyFile: false,
    redisOptions: { connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null },
  });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const redisSources: CompletionSources = {
  runIds: (typed) => withQuickClient(typed, async (client) => (await client.readRunPage({ limit: 200, backward: true })).runs.map((run) => run.id)),
  workerNames: (typed) => withQuickClient(typed, async (client) => (await client.listWorkers()).map((worker) => worker.name)),
  namespaces: (typed) =>
    withQuickClient(typed, async (client) => {
      const { prefix } = resolveNamespace({});
      const found = new Set<string>();
      let cursor = '0';
      for (let call = 0; call < SCAN_CALLS; call++) {
        const [next, keys] = await client.redis.scan(cursor, 'MATCH', `${prefix}:{*`, 'COUNT', SCAN_COUNT);
        for (const key of keys) {
          const queue = /^[^{]*\{([^}]*)\}/.exec(key.slice(prefix.length))?.[1];
          if (queue) found.add(queue);
        }
        cursor = next;
        if (cursor === '0') break;
      }
      return [...found];
    }),
};
