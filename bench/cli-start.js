// How long a fitq command takes as users run it, a process of its own from
// spawn to exit: `fitq --help`, `fitq runs` on an empty namespace and `fitq
// stage -- true`, each beside `node -e 0` (what starting Node alone costs).
// Every round runs the baseline, then a case, for each case in turn, so a
// load that comes and goes meets both; one round to warm up is not counted.
// Reported: each case's median, the median of the baselines run beside it,
// and the median of the ratios pair by pair.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 15);
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Runs node with `args` to its exit; its wall time in ms. A failure, or output not as `expect` says, throws. */
function timed(args, env, expect) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - start;
      if (code === 0 && expect(stdout)) resolve(ms);
      else reject(new Error(`node ${args.join(' ')} exited ${code}: ${stdout.slice(0, 200)}${stderr.slice(0, 500)}`));
    });
  });
}

/** The cases, on the Redis at `url`: `fitq runs` in a namespace nothing is staged in, `fitq stage` in another. */
export async function cliStart(url, newQueue) {
  const stateDir = mkdtempSync(join(tmpdir(), 'fitq-bench-state-'));
  const env = { ...process.env, FITQ_REDIS_URL: url, FITQ_STATE_DIR: stateDir };
  delete env.REDIS_URL;
  const cases = [
    { name: 'fitq --help', args: [BIN, '--help'], env, expect: (out) => out.includes('USAGE') },
    { name: 'fitq runs', where: 'empty namespace', args: [BIN, 'runs'], env: { ...env, FITQ_QUEUE: newQueue() }, expect: (out) => out === 'No runs.\n' },
    { name: 'fitq stage -- true', args: [BIN, 'stage', '--', 'true'], env: { ...env, FITQ_QUEUE: newQueue() }, expect: (out) => /^\w+\n$/.test(out) },
  ];
  const baseline = { args: ['-e', '0'], env, expect: () => true };
  const samples = cases.map(() => ({ fitq: [], node: [] }));
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      for (const [i, { args, env: caseEnv, expect }] of cases.entries()) {
        const node = await timed(baseline.args, baseline.env, baseline.expect);
        const fitq = await timed(args, caseEnv, expect);
        if (round === 0) continue;
        samples[i].fitq.push(fitq);
        samples[i].node.push(node);
      }
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
  return {
    rounds: ROUNDS,
    cases: cases.map(({ name, where }, i) => {
      const { fitq, node } = samples[i];
      return { name, where, ms: median(fitq), nodeMs: median(node), pairRatio: median(fitq.map((ms, j) => ms / node[j])) };
    }),
  };
}
