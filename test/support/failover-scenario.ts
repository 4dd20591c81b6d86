/**
 * A failover while CLI workers run: runs record their own start and end in
 * a ledger file (as the chaos test's do), so the checks rest on what really
 * ran, not on what fitq recorded. `failover` kills the Redis master the
 * namespace stands on; meanwhile a CLI stage and a CLI read are issued, and
 * must wait for the new master rather than fail.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { spawnCliWorker, type CliWorker } from './cli-worker.js';
import { fitq, fitqProcess, type CliResult } from './fitq.js';
import { waitFor } from './wait.js';

export interface FailoverScenario {
  /** Runs staged before the failover, and the one staged during it. */
  runs: number;
  workers: CliWorker[];
  /** What the CLI commands issued during the failover said. */
  duringFailover: { stage: CliResult; runs: CliResult };
  /** Per run id, the workers it started on, in order. */
  starts: Map<string, string[]>;
}

interface LedgerLine {
  kind: 'start' | 'end';
  runId: string;
  worker: string;
  at: number;
}

const CAPACITY = 3;

function readLedger(path: string): LedgerLine[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, runId, worker, at] = line.split(' ');
      return { kind: kind as 'start' | 'end', runId: runId!, worker: worker!, at: Number(at) };
    });
}

/** Most runs any one worker had going at once, from the ledger. */
function peakPerWorker(lines: readonly LedgerLine[]): number {
  let peak = 0;
  const byWorker = new Map<string, LedgerLine[]>();
  for (const line of lines) byWorker.set(line.worker, [...(byWorker.get(line.worker) ?? []), line]);
  for (const events of byWorker.values()) {
    let going = 0;
    // Ends first at a tie: a run that ended in the same ms another started did not overlap it.
    for (const event of [...events].sort((a, b) => a.at - b.at || (a.kind === 'end' ? -1 : 1))) {
      going += event.kind === 'start' ? 1 : -1;
      peak = Math.max(peak, going);
    }
  }
  return peak;
}

/**
 * Stages `count` runs, starts two CLI workers (cpu=3 each) through `url`,
 * calls `failover` once a quarter of the runs have started, issues a CLI
 * stage and a CLI read at once, and waits until every run has ended.
 * Checks that every run ran exactly once and completed, and that no worker
 * ever had more than its capacity going.
 */
export async function runThroughFailover(queue: string, url: string, failover: () => Promise<unknown>, count = 60): Promise<FailoverScenario> {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-failover-'));
  const ledger = join(dir, 'ledger');
  const env = { FITQ_REDIS_URL: url };
  const line = (kind: string) => `echo "${kind} $FITQ_RUN_ID $FITQ_WORKER $(date +%s%3N)" >> '${ledger}'`;
  const command = `${line('start')}; sleep 0.3; ${line('end')}`;
  try {
    const staged = await fitq(['stage', '-r', 'cpu=1', '--array', `0-${count - 1}`, '--', 'sh', '-c', command], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const workers = ['fw1', 'fw2'].map((name) => spawnCliWorker(queue, ['-r', `cpu=${CAPACITY}`, '--name', name], url));
    await waitFor('a quarter of the runs to start', () => readLedger(ledger).filter((l) => l.kind === 'start').length >= count / 4);

    const failing = failover();
    // Issued as the master dies: they wait for the new one (FAILOVER_WAIT_MS) instead of failing.
    const [stage, runs] = await Promise.all([
      fitqProcess(['stage', '-r', 'cpu=1', '--', 'sh', '-c', command], { queue, env }),
      fitqProcess(['runs', '--json'], { queue, env }),
    ]);
    await failing;
    const total = count + 1;

    let seen = 'nothing listed yet';
    let notEnded = '';
    await waitFor(
      'all runs to end completed',
      async () => {
        const listed = await fitq(['runs', '--expand', '--json', '--all'], { queue, env });
        if (listed.exitCode !== 0) return false;
        const statuses = (JSON.parse(listed.stdout) as { runs: { status: string }[] }).runs.map((run) => run.status);
        seen = JSON.stringify(Object.fromEntries([...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length])));
        notEnded = (JSON.parse(listed.stdout) as { runs: { id: string; status: string; reason?: string }[] }).runs
          .filter((run) => run.status !== 'completed')
          .map((run) => `${run.id} ${run.status}${run.reason ? ` (${run.reason})` : ''}`)
          .join('; ');
        return statuses.length === total && statuses.every((status) => status === 'completed');
      },
      150_000,
      500,
    ).catch((error: Error) => {
      const stderr = (result: CliResult) => result.stderr.trim().split('\n').slice(-3).join(' | ');
      // What the workers said of the runs that did not complete, and of Redis.
      const ids = notEnded.split('; ').map((entry) => entry.split(' ')[0]!).filter(Boolean);
      const said = workers.flatMap((worker) => worker.messages().filter((message) => ids.some((id) => message.includes(id)) || /Redis/.test(message)));
      throw new Error(
        `${error.message}: ${total} runs staged, fitq lists ${seen} [${notEnded}]; stage during the failover exited ${stage.exitCode} (${stderr(stage)}), ` +
          `runs ${runs.exitCode} (${stderr(runs)}); the workers said: ${said.join(' | ')}`,
      );
    });
    const lines = readLedger(ledger);
    const starts = new Map<string, string[]>();
    for (const entry of lines.filter((l) => l.kind === 'start')) starts.set(entry.runId, [...(starts.get(entry.runId) ?? []), entry.worker]);
    expect(starts.size).toBe(total);
    expect([...starts].filter(([, on]) => on.length !== 1)).toEqual([]);
    expect(lines.filter((l) => l.kind === 'end')).toHaveLength(total);
    expect(peakPerWorker(lines)).toBeLessThanOrEqual(CAPACITY);
    return { runs: total, workers, duringFailover: { stage, runs }, starts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
