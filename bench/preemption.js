// What preemption costs the claim when nothing can be preempted: a worker
// (cpu=16) runs 16 runs of cpu=1 and holds a blocked head of cpu=2 of
// their priority, and claims again and again (each claim holds the head
// and looks for runs to preempt for it). The runs are staged --preemptible
// in one case (the claim decodes each one's claim record: none may go, the
// head's priority is theirs) and not in the other (the baseline: the claim
// skips their records unread), as Redis times each claim script call
// (SLOWLOG). The cases alternate over ROUNDS rounds; each reports its median round.
import { FitqClient } from '../dist/index.js';
import { Scripts } from '../dist/queue/scripts.js';
import { luaScript } from '../dist/queue/lua-source.js';

const SLOTS = 16;
const CLAIMS = 1000;
const ROUNDS = 3;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** One case: the claim's median server µs with a blocked head and SLOTS running runs, preemptible or not. */
async function blockedClaims(url, queue, preemptible) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    await client.stage({ command: ['true'], resources: 'cpu=1', repeat: SLOTS, ...(preemptible ? { preemptible: true } : {}) });
    const scripts = new Scripts(client.redis, client.keys, 100);
    await scripts.registerWorker({ name: 'w', token: 't', leaseMs: 600_000, concurrency: 0, host: 'bench', pid: 0, resources: `cpu=${SLOTS}` });
    for (let i = 0; i < SLOTS; i++) {
      if ((await scripts.claimRun('w', 't', 0)).code !== 'claimed') throw new Error('a run did not start');
    }
    await client.stage({ command: ['true'], resources: 'cpu=2' });
    const claimSha = luaScript('claimRun').sha;
    await client.redis.config('SET', 'slowlog-log-slower-than', '0');
    await client.redis.config('SET', 'slowlog-max-len', '1000000');
    await client.redis.call('SLOWLOG', 'RESET');
    for (let i = 0; i < CLAIMS; i++) {
      const result = await scripts.claimRun('w', 't', 0);
      if (result.code !== 'waiting' || result.preempting.length > 0) throw new Error(`the claim replied ${result.code}`);
    }
    const log = await client.redis.call('SLOWLOG', 'GET', '-1');
    await client.redis.config('SET', 'slowlog-log-slower-than', '10000');
    const micros = log.filter(([, , , command]) => /^evalsha$/i.test(String(command[0])) && String(command[1]) === claimSha).map(([, , us]) => Number(us));
    return { micros: median(micros), calls: micros.length };
  } finally {
    await client.close();
  }
}

/** Both cases, each round in namespaces of its own on the same Redis, in turn. */
export async function preemptionClaims(url, newQueue) {
  const rounds = { preemptible: [], plain: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.preemptible.push(await blockedClaims(url, newQueue(), true));
    rounds.plain.push(await blockedClaims(url, newQueue(), false));
  }
  const middle = (cases) => [...cases].sort((a, b) => a.micros - b.micros)[Math.floor(cases.length / 2)];
  return {
    slots: SLOTS, claims: CLAIMS, rounds: ROUNDS, preemptible: middle(rounds.preemptible), plain: middle(rounds.plain),
    all: Object.fromEntries(Object.entries(rounds).map(([name, cases]) => [name, cases.map((c) => c.micros)])),
  };
}
