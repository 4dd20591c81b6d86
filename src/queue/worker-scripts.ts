/**
 * Typed calls of the scripts a worker makes: registering and renewing its
 * lease, claiming (and taking back a claim a failover lost), its runs'
 * output and ends, preemptions, and the controls other commands send it
 * (drain, stop); and reaping workers whose lease ran out.
 */
import type { ClaimedRun } from '../model/claimed-run.js';
import type { LogLine, LogPosition } from '../model/logs.js';
import {
  limitArg,
  parseClaimReply,
  parsePreempting,
  parseReclaimReply,
  type ClaimLimits,
  type ClaimPolicy,
  type ClaimResult,
  type GpuPlacement,
  type Preempting,
  type ReclaimResult,
} from './claim-reply.js';
import { acceptReply, codeName } from './script-codes.js';
import { SettingsScripts } from './settings-scripts.js';
import { REAP_BATCH } from './upkeep-budgets.js';
import type { FinishInput, FinishResult, StopMode, WorkerRegistration } from './worker-calls.js';

export class WorkerScripts extends SettingsScripts {
  /**
   * Registers a worker; false when a live worker holds the name. Leases use
   * the Redis server's clock. A namespace of an older fitq is refused (RefusedError).
   */
  async registerWorker(input: WorkerRegistration): Promise<boolean> {
    const reply = await this.call(
      'registerWorker', { worker: input.name }, this.keys.base, input.name, input.token, input.policy ?? 'backfill', input.leaseMs, input.concurrency,
      input.host, input.pid, input.resources, this.logMaxLines, (input.devices ?? []).join(','),
      input.gpuPlacement ?? 'pack', limitArg(input.timeLimits?.defaultMs), limitArg(input.timeLimits?.maxMs), input.drained ? '1' : '',
      input.gpuProbeStaleMs ? input.gpuProbeStaleMs : '', (input.migDevices ?? []).join(','),
    );
    // A live worker holding the name is the caller's to explain (a start, or a re-registration).
    if (codeName(reply) === 'workerNameTaken') return false;
    return acceptReply(reply, input.name, this.keys) === 'ok';
  }

  /**
   * Renews a lease; returns run ids whose cancellation is pending, any stop
   * request, the runs (with their claim epoch) Redis holds for the worker,
   * whether it is drained, and its runs a claim preempted; undefined when fenced.
   */
  async heartbeat(
    name: string,
    token: string,
    leaseMs: number,
  ): Promise<{ cancels: string[]; stop?: StopMode; held: { runId: string; epoch: string }[]; drained: boolean; preempting: Preempting[] } | undefined> {
    const reply = (await this.call('heartbeat', { worker: name }, this.keys.base, name, token, leaseMs)) as [number, string[]?, string?, string[]?, number?, string[]?];
    if (codeName(reply[0]) !== 'ok') return undefined;
    const stop = reply[2];
    const flat = reply[3] ?? [];
    const held: { runId: string; epoch: string }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) held.push({ runId: flat[i]!, epoch: flat[i + 1]! });
    return {
      cancels: reply[1] ?? [],
      held,
      drained: reply[4] === 1,
      preempting: parsePreempting(reply[5]),
      ...(stop === 'graceful' || stop === 'now' ? { stop } : {}),
    };
  }

  /**
   * At the end of a preempted run's grace: whether its worker stops it
   * (`stop`: the run it makes room for still waits, or Redis says nothing
   * of the preemption) or it runs on (`keep`: that run no longer waits; the
   * preemption was dropped).
   */
  async checkPreemption(name: string, token: string, runId: string, epoch: string): Promise<'stop' | 'keep'> {
    const [code, verdict] = (await this.call('checkPreemption', { worker: name }, this.keys.base, name, token, runId, epoch)) as [number, string?];
    return codeName(code) === 'ok' && verdict === 'keep' ? 'keep' : 'stop';
  }

  /**
   * Marks the request recorded on a run refused (`why`), dropping the
   * cancellation it asked for; false when the run records another request
   * now (see refuseRequest-*.lua).
   */
  async refuseRequest(runId: string, request: string, why: string): Promise<boolean> {
    const [code] = (await this.call('refuseRequest', { runId }, request, why)) as [number];
    return codeName(code) === 'ok';
  }

  /**
   * Records what a worker's running runs used so far: run id -> its claim's
   * epoch and its usage (encodeRunUsage). Resolves with how many were
   * recorded; false when the worker is fenced (nothing recorded).
   */
  async recordUsage(name: string, token: string, usages: readonly { runId: string; epoch: string; usage: string }[]): Promise<number | false> {
    const triples = usages.flatMap(({ runId, epoch, usage }) => [runId, epoch, usage]);
    const [code, recorded] = (await this.call('recordUsage', { worker: name }, this.keys.base, name, token, usages.length, triples)) as [number, number];
    return codeName(code) === 'fenced' ? false : recorded;
  }

  /**
   * Records a worker's GPU probe: each device's reading (src/gpu/device-reading.ts),
   * replacing the last. False when the worker is fenced (nothing recorded).
   */
  async recordGpuProbe(name: string, token: string, readings: ReadonlyMap<number, string>): Promise<boolean> {
    const pairs = [...readings].flatMap(([index, reading]) => [String(index), reading]);
    const reply = await this.call('recordGpuProbe', { worker: name }, this.keys.base, name, token, readings.size, pairs);
    return codeName(reply) === 'ok';
  }

  async claimRun(
    worker: string,
    token: string,
    maxRuns: number,
    policy: ClaimPolicy = 'backfill',
    gpuPlacement: GpuPlacement = 'pack',
    timeLimits: ClaimLimits = {},
    /** Most runs at once that demand nothing (0 = no limit): capacity bounds the others. */
    maxBare = 0,
  ): Promise<ClaimResult> {
    const reply = (await this.call(
      'claimRun', { worker }, this.keys.base, token, maxRuns, policy, gpuPlacement,
      limitArg(timeLimits.defaultMs), limitArg(timeLimits.maxMs), maxBare,
    )) as unknown[];
    return parseClaimReply(reply);
  }

  /**
   * Takes back a claim a failover lost (the worker started the run on it,
   * the new master never had it), as it was, if the run is still staged and
   * what it reserved still free (see reclaimRun-*.lua); else the run moved
   * on without it, which its history records.
   */
  async reclaimRun(worker: string, token: string, claim: ClaimedRun): Promise<ReclaimResult> {
    const { fields } = claim;
    const reply = (await this.call(
      'reclaimRun', { worker }, this.keys.base, token, claim.runId, claim.epoch, fields.reserved ?? '', fields.pooled ?? '',
      fields.devices ?? '', fields.deviceShare ?? '', fields.runLimit ?? '', fields.deadline ?? '', fields.processedOn ?? '',
    )) as unknown[];
    return parseReclaimReply(reply);
  }

  /**
   * Appends output lines of a run, unless the claim that produced them has
   * moved on or its worker no longer holds its lease; returns lines written.
   * With `position`, each line is stored with its number among the lines of
   * its attempt (see LogPosition).
   */
  async appendLog(runId: string, worker: string, token: string, epoch: string, lines: readonly LogLine[], position?: LogPosition): Promise<number> {
    const args: string[] = [];
    for (const { stream, line } of lines) args.push(stream, line);
    const reply = await this.call(
      'appendLog', { runId, worker }, worker, token, epoch, this.logMaxLines, position?.first ?? '', position?.slow ?? 0, position?.refused ?? 0, args,
    );
    return Number(reply);
  }

  /** Records a run's end (the Redis server's clock), only for the current claim of a live registration; see FinishResult. */
  async finishRun(input: FinishInput): Promise<FinishResult> {
    const [code, status] = (await this.call(
      'finishRun', { runId: input.runId, worker: input.worker }, this.keys.base, input.runId, input.worker, input.token, input.epoch, input.status,
      input.exitCode ?? '', input.signal ?? '', input.reason, this.logMaxLines, input.usage ?? '',
    )) as [number, string];
    const outcome = codeName(code);
    if (outcome === 'ok') return { outcome: 'recorded', status: status as Extract<FinishResult, { outcome: 'recorded' }>['status'] };
    if (outcome === 'unchanged') return { outcome: 'movedOn', status: status || undefined };
    return { outcome: 'fenced' };
  }

  /**
   * Drops the hold a (stopping) worker has on its blocked head; only for the
   * registration under `token`. Returns whether a hold was dropped.
   */
  async dropHold(worker: string, token: string): Promise<boolean> {
    return codeName(await this.call('dropHold', { worker }, token)) === 'ok';
  }

  async deregisterWorker(name: string, token: string): Promise<boolean> {
    const reply = await this.call('deregisterWorker', { worker: name }, this.keys.base, name, token, this.logMaxLines);
    return codeName(reply) === 'ok';
  }

  /** Reaps expired workers; returns them and how long until the next lease runs out (if any). */
  async reapWorkers(limit = REAP_BATCH): Promise<{ reaped: string[]; msUntilNext: number | undefined }> {
    const [reaped, next] = (await this.call('reapWorkers', {}, this.keys.base, limit, this.logMaxLines)) as [string[], string | number];
    const msUntilNext = Number(next);
    return { reaped, msUntilNext: msUntilNext < 0 ? undefined : msUntilNext };
  }

  /**
   * Drains a live worker (it claims nothing more; its hold is dropped) or
   * undrains it; undefined when no live worker has the name, else whether
   * it changed.
   */
  async setDrained(name: string, drained: boolean): Promise<boolean | undefined> {
    const [code, changed] = (await this.call('setDrained', { worker: name }, this.keys.base, name, drained ? 'drain' : 'undrain')) as [number, number?];
    return codeName(code) === 'ok' ? changed === 1 : undefined;
  }

  /** Asks a live worker to stop; false when no live worker has the name. */
  async requestStop(name: string, mode: StopMode): Promise<boolean> {
    return codeName(await this.call('requestStop', { worker: name }, this.keys.base, name, mode)) === 'ok';
  }
}
