// Where a one-shape claim's time goes: the claim script as Redis gets it,
// with the server's clock read (and kept in a list) before each of its
// steps, run for real (each claimed run is finished, so the worker's state
// stays as a worker's does), 800 times. Reported: each step's median time,
// and the script's median as SLOWLOG times it against a script that does
// nothing. Each clock reading itself costs some 2 µs, counted in the step
// it ends.
import { FitqClient } from '../dist/index.js';
import { Scripts } from '../dist/queue/scripts.js';
import { luaScript } from '../dist/queue/lua-source.js';

const CLAIMS = 800;
const PROBE_LIST = 'claim-parts:probes';

/** The steps, by the line of claimRun each begins at (the first line matching). */
const STEPS = [
  ['the worker, its lease and state', /^local name = redis\.call/],
  ['runs whose begin time came (promoteDueRuns)', /^local _, nextBegin/],
  ['paused?', /^if queuePaused/],
  ['its view: capacity, free, devices, holds', /^local view = readClaimView/],
  ['the groups it can run (candidateStream)', /^local stream, ignored/],
  ["its class's fit indexes (catchUpClass)", /^if not catchUpClass/],
  ['the walk and the decision (decideClaim)', /^local decision/],
  ['drops', /^local reindex/],
  ['its hold', /^local chosen, head/],
  ['nothing to start?', /^if chosen == nil/],
  ['the job to active (activateJob)', /^activateJob/],
  ['wait statistics (countRunStart), the index in step (unindex)', /^countRunStart/],
  ['amounts and the run fields', /^adjustAmounts\(workerFreeKey/],
  ['the claim record', /^redis\.call\("HSET", workerReservedKey/],
  ['the reply', /^return \{CODE\.ok/],
];

/** The claim script with a clock reading before each step. */
function probedClaim() {
  const out = [];
  for (const line of luaScript('claimRun').lua.split('\n')) {
    const step = STEPS.findIndex(([, pattern]) => pattern.test(line));
    if (step >= 0) out.push(`do local t = redis.call("TIME") redis.call("RPUSH", "${PROBE_LIST}", "${step} " .. t[1] .. string.format("%06d", t[2])) end`);
    out.push(line);
  }
  return out.join('\n');
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Runs the probed claim on a worker (cpu=4) with one shape staged; gives each step's median µs and the plain claim's SLOWLOG median. */
export async function claimParts(url, queue) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  const redis = client.redis;
  try {
    const scripts = new Scripts(redis, client.keys, 100);
    await scripts.registerWorker({ name: 'w', token: 'tok', leaseMs: 600_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=4' });
    await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 2 * CLAIMS + 10 });
    const finish = (runId, epoch) => scripts.finishRun({ runId, worker: 'w', token: 'tok', epoch: String(epoch), status: 'completed', exitCode: 0, reason: 'exit code 0' });

    // The plain claim as SLOWLOG times it, and the floor: a script that does nothing; KEYS and ARGV as the claim's.
    let args;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (command) => {
      if (/^evalsha$/i.test(command.name)) args ??= command.args.slice(1);
      return send(command);
    };
    const first = await scripts.claimRun('w', 'tok', 0);
    redis.sendCommand = send;
    await finish(first.runId, first.epoch);
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', String(4 * CLAIMS));
    await redis.call('SLOWLOG', 'RESET');
    const empty = await redis.script('LOAD', 'return 1');
    for (let i = 0; i < CLAIMS; i++) {
      const claimed = await scripts.claimRun('w', 'tok', 0);
      await finish(claimed.runId, claimed.epoch);
      await redis.evalsha(empty, ...args);
    }
    const logged = await redis.call('SLOWLOG', 'GET', '-1');
    await redis.config('SET', 'slowlog-log-slower-than', '10000');
    const timesOf = (sha) => logged.filter(([, , , command]) => /^evalsha$/i.test(String(command[0])) && String(command[1]) === sha).map(([, , micros]) => Number(micros));
    const claimSha = luaScript('claimRun').sha;

    // The probed claim, step by step.
    const probed = await redis.script('LOAD', probedClaim());
    const steps = STEPS.map(() => []);
    for (let i = 0; i < CLAIMS; i++) {
      await redis.del(PROBE_LIST);
      const reply = await redis.evalsha(probed, ...args);
      const readings = (await redis.lrange(PROBE_LIST, 0, -1)).map((text) => text.split(' ').map(Number));
      for (let j = 1; j < readings.length; j++) steps[readings[j - 1][0]].push(readings[j][1] - readings[j - 1][1]);
      if (reply[0] === 1) await finish(String(reply[1]), reply[2]);
    }
    await redis.del(PROBE_LIST);
    return {
      claimMicros: median(timesOf(claimSha)),
      emptyMicros: median(timesOf(empty)),
      steps: STEPS.map(([name], i) => ({ name, micros: median(steps[i]), samples: steps[i].length })).filter((step) => step.samples > 0),
    };
  } finally {
    await client.close();
  }
}
