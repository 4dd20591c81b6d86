/**
 * The start of a claimed run: checked (signed runs), its environment made
 * and its process spawned (let go by the spawn helper once the helper's
 * watchdog has its process group), its output stored as it comes; then,
 * once its group is known, marked running and its time limit armed.
 */
import type { Logger } from 'pino';
import { claimMismatch } from '../security/claim-check.js';
import { verifyRun, type Verification } from '../security/signing.js';
import { verifyUserSignature } from '../security/user-keys.js';
import { formatTimeLimit } from '../units/duration.js';
import type { ActiveRun } from './active-run.js';
import { startRunProcess, type RunProcess } from './child.js';
import { newRunToken, RUN_TOKEN_VARIABLE } from './escaped-sweep.js';
import type { ExecutorContext } from './executor-context.js';
import { OutputBuffer } from './output.js';
import type { RunEnding } from './run-ending.js';
import { attemptEnv, grantedResourcesEnv } from './run-env.js';
import { runTimeLimit } from './time-limit.js';
import { watchTimeLimit } from './time-limit-watch.js';

/** A run spawned. */
export interface SpawnedRun {
  /** Its process (also `run.process`). */
  process: RunProcess;
  output: OutputBuffer;
  /** In its environment: finds what escaped it once it has exited (escaped-sweep.ts). */
  token: string;
  /** The devices it was given, if any. */
  devices: string | undefined;
  /** When its process was spawned (performance.now()): what it left behind was started since (escaped-sweep.ts). */
  spawnedAtMs: number;
}

/**
 * Why the worker refuses a run it claimed: not signed as it requires (with
 * the shared secret; by its user's registered key, --require-signed),
 * signed for other demands than its claim reserved, or changed last at a
 * request that is not proven (--require-signed). Undefined: it runs.
 */
async function refusalOf(ctx: ExecutorContext, run: ActiveRun): Promise<string | undefined> {
  const signed = { namespace: ctx.keys.base, runId: run.runId, fields: run.fields };
  const verdicts: Verification[] = [];
  if (ctx.secret) verdicts.push(verifyRun(ctx.secret, signed));
  if (ctx.userKeyOf) {
    const user = run.fields.user;
    verdicts.push(verifyUserSignature(signed, user === undefined ? undefined : await ctx.userKeyOf(user)));
  }
  if (verdicts.length === 0) return undefined;
  const failed = verdicts.find((verdict) => !verdict.ok);
  if (failed && !failed.ok) return failed.reason;
  return claimMismatch(run) ?? (await ctx.requestCheck?.startRefusal(run.runId, run.fields.user));
}

/**
 * Spawns a claimed run's process (see child.ts); resolves with it, or with
 * its rejection when the worker wants signed runs and this one is not, or
 * was altered.
 */
export async function spawnRun(ctx: ExecutorContext, run: ActiveRun, log: Logger): Promise<SpawnedRun | RunEnding> {
  // Checked on the very fields it is started with, as the claim read them.
  const refused = await refusalOf(ctx, run);
  if (refused !== undefined) return { status: 'rejected', reason: refused };
  const record = run.run;
  const token = newRunToken();
  run.token = token;
  const output = new OutputBuffer(
    ctx.scripts,
    run.runId,
    ctx.workerName,
    ctx.token,
    run.epoch,
    ctx.logMaxLines,
    (error, retrying) =>
      log.warn(`Could not store output of run ${run.runId}${retrying ? ' yet; retrying until Redis takes it' : ''}: ${(error as Error).message}`),
    ctx.givenUp,
  );
  const env: Record<string, string> = {
    ...ctx.inheritedEnv,
    ...record.env,
    FITQ_RUN_ID: run.runId,
    [RUN_TOKEN_VARIABLE]: token,
    FITQ_WORKER: ctx.workerName,
    FITQ_RESOURCES: grantedResourcesEnv(run.demands),
    ...attemptEnv(run),
  };
  // Devices placed by the claim; on a worker without devices, the run's pin.
  // (A MIG device goes by its UUID: CUDA_VISIBLE_DEVICES=MIG-….)
  const devices = (run.devices.length > 0 ? run.devices.map((id) => ctx.deviceNames?.get(id) ?? String(id)) : run.pinnedGpus).join(',');
  if (devices && ctx.gpuVendor === 'amd' && run.devices.length > 0) {
    // ROCR's variable alone: HIP numbers devices among those ROCR leaves, so an inherited HIP (or CUDA) list could hide them all.
    env.ROCR_VISIBLE_DEVICES = devices;
    delete env.HIP_VISIBLE_DEVICES;
    delete env.CUDA_VISIBLE_DEVICES;
  } else if (devices) {
    env.CUDA_VISIBLE_DEVICES = devices;
    env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
  }
  let joinCgroups: string[];
  try {
    // Its cgroup (--enforce), made before it starts: its process joins it before the command runs.
    joinCgroups = ctx.usage.prepare(run.runId, run.epoch, run.demands);
  } catch (error) {
    return { status: 'returned', reason: `could not make its cgroup: ${(error as Error).message}` };
  }
  const spawnedAtMs = performance.now();
  run.process = await startRunProcess({
    joinCgroups,
    command: record.command,
    shell: record.shell,
    cwd: record.cwd,
    env,
    reapEscaped: ctx.reapEscaped,
    killGraceMs: ctx.killGraceMs,
    ...(record.output === undefined ? {} : { output: record.output }),
    onLine: (stream, line) => {
      output.add({ stream, line });
      echo(ctx, run.runId, stream, line);
    },
  });
  return { process: run.process, output, token, devices: devices || undefined, spawnedAtMs };
}

/** Marks a spawned run running once its command runs in process group `group`, and arms its time limit. */
export function markRunning(ctx: ExecutorContext, run: ActiveRun, spawned: SpawnedRun, group: number, log: Logger): void {
  const { process: runProcess, devices } = spawned;
  run.phase = 'running';
  run.group = group;
  run.startedAtMs = performance.now();
  // Its session is its first process's (the command's, or the keeper's).
  if (runProcess.pid !== undefined) ctx.usage.started(run.runId, runProcess.pid);
  ctx.onRunStarted?.();
  const limit = runTimeLimit(run, ctx.timeLimits);
  const limitFields = limit ? { timeLimitMs: limit.limitMs, timeLimit: formatTimeLimit(limit.limitMs) } : {};
  log.info({ pid: group, ...(devices ? { devices } : {}), ...limitFields }, `Run ${run.runId} started`);
  if (limit) run.disarmLimit = watchTimeLimit(run, runProcess, limit, ctx.killGraceMs, log);
}

/** A line of a run's output in the worker's own output (--echo-output). */
function echo(ctx: ExecutorContext, runId: string, stream: 'stdout' | 'stderr', line: string): void {
  if (!ctx.echoOutput) return;
  if (ctx.logFormat === 'json') ctx.logger.info({ runId, output: stream }, line);
  else process.stdout.write(`${runId} | ${line}\n`);
}
