// The claim with users' quotas on, against the same queue without them, as
// Redis times each claim script call (SLOWLOG, every call kept): 50 users
// each stage runs (interleaved, so every user's runs are in the queue at
// once), a worker (cpu=16) claims 1,500 times, finishing its oldest run
// whenever it is full, as a busy worker does. With quotas, each user may
// run 2 at once (and cpu=2), so most claims pass over users at their quota
// before they find a run to start. A third case, one user without quotas,
// is the claim as it was before runs were told apart by user. Fair share
// is on (the default) in those; a fourth case, the 50 users without quotas
// and with fair share off (`fitq share set --off`), is the baseline of the
// claim's fair-share order: with it on, every claim reads the users'
// usage and orders the users' shapes of the first priority band by it. The
// cases alternate over ROUNDS rounds; each reports its median round.
import { FitqClient } from '../dist/index.js';
import { Scripts } from '../dist/queue/scripts.js';
import { luaScript } from '../dist/queue/lua-source.js';

const USERS = 50;
const RUNS_PER_USER = 60;
const CLAIMS = 1500;
const SLOTS = 16;
const ROUNDS = 3;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** One case: `users` stagers, `quota` (specs, or none) for every user, fair share on or off; the claims' median server µs and what they did. */
async function claimCase(url, queue, users, quota, fairShare = true) {
  const admin = await FitqClient.connect({ redisUrl: url, queue });
  const stagers = await Promise.all(Array.from({ length: users }, (_, i) => FitqClient.connect({ redisUrl: url, queue, user: `user${i}` })));
  try {
    if (quota) await admin.setQuota({ default: true }, quota);
    if (!fairShare) await admin.changeFairShare({ on: false });
    const perUser = Math.ceil((USERS * RUNS_PER_USER) / users);
    // Interleaved: a few runs of each user at a time, oldest first.
    for (let round = 0; round < perUser; round += 10) {
      for (const stager of stagers) await stager.stage({ command: ['true'], resources: 'cpu=1', repeat: Math.min(10, perUser - round) });
    }
    const scripts = new Scripts(admin.redis, admin.keys, 100);
    await scripts.registerWorker({ name: 'w', token: 't', leaseMs: 600_000, concurrency: 0, host: 'bench', pid: 0, resources: `cpu=${SLOTS}` });
    const claimSha = luaScript('claimRun').sha;
    await admin.redis.config('SET', 'slowlog-log-slower-than', '0');
    // (Redis logs the commands a script calls too: room for all of them.)
    await admin.redis.config('SET', 'slowlog-max-len', '1000000');
    await admin.redis.call('SLOWLOG', 'RESET');
    const running = [];
    let claimed = 0;
    let passedOver = 0;
    for (let i = 0; i < CLAIMS; i++) {
      const result = await scripts.claimRun('w', 't', 0);
      if (result.code === 'claimed') {
        claimed++;
        running.push({ runId: result.runId, epoch: result.epoch });
      } else {
        passedOver++;
      }
      // Full, or nothing it may start now (every user at their quota): its oldest run ends.
      if (running.length >= SLOTS || result.code !== 'claimed') {
        const run = running.shift();
        if (run) await scripts.finishRun({ runId: run.runId, worker: 'w', token: 't', epoch: String(run.epoch), status: 'completed', exitCode: 0, reason: 'exit code 0' });
      }
    }
    const log = await admin.redis.call('SLOWLOG', 'GET', '-1');
    await admin.redis.config('SET', 'slowlog-log-slower-than', '10000');
    const micros = log.filter(([, , , command]) => /^evalsha$/i.test(String(command[0])) && String(command[1]) === claimSha).map(([, , us]) => Number(us));
    return { micros: median(micros), calls: micros.length, claimed, waited: passedOver };
  } finally {
    await Promise.all([admin, ...stagers].map((client) => client.close()));
  }
}

/** The three cases, each round in namespaces of its own on the same Redis, in turn. */
export async function quotaClaims(url, newQueue) {
  const quota = ['running=2', 'cpu=2'];
  const rounds = { withQuotas: [], withoutQuotas: [], oneUser: [], fairOff: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.withQuotas.push(await claimCase(url, newQueue(), USERS, quota));
    rounds.withoutQuotas.push(await claimCase(url, newQueue(), USERS, undefined));
    rounds.oneUser.push(await claimCase(url, newQueue(), 1, undefined));
    rounds.fairOff.push(await claimCase(url, newQueue(), USERS, undefined, false));
  }
  const middle = (cases) => [...cases].sort((a, b) => a.micros - b.micros)[Math.floor(cases.length / 2)];
  return {
    users: USERS, runs: USERS * RUNS_PER_USER, claims: CLAIMS, slots: SLOTS, rounds: ROUNDS, quota,
    withQuotas: middle(rounds.withQuotas), withoutQuotas: middle(rounds.withoutQuotas), oneUser: middle(rounds.oneUser), fairOff: middle(rounds.fairOff),
    all: Object.fromEntries(Object.entries(rounds).map(([name, cases]) => [name, cases.map((c) => c.micros)])),
  };
}
