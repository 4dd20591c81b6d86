/**
 * The lease's heartbeat: renews the registration every third of the lease
 * and acts on what the reply carries — the registration gone (fenced),
 * cancels and a stop request missed as events, the runs Redis holds for this
 * worker (lost ends recorded again, lost claims taken back: lost-claims.ts)
 * — then reaps dead workers. It beats on while the worker stops, or
 * its runs still finishing would be reaped as lost.
 */
import type { Logger } from 'pino';
import { heartbeatIntervalMs } from '../model/liveness.js';
import type { Scripts } from '../queue/scripts.js';
import type { ClaimLoop } from './claims.js';
import type { Lease } from './lease.js';
import type { Lifecycle } from './lifecycle.js';
import type { LostClaims } from './lost-claims.js';
import type { Reaper } from './reaper.js';
import type { Requests } from './requests.js';

export interface HeartbeatParts {
  name: string;
  leaseMs: number;
  scripts: Scripts;
  logger: Logger;
  lifecycle: Lifecycle;
  lease: Lease;
  claims: ClaimLoop;
  requests: Requests;
  reaper: Reaper;
  lostClaims: LostClaims;
  /** Records what the runs use so far (see usage/), under the registration `token`. */
  recordUsage: (token: string) => Promise<void>;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly parts: HeartbeatParts) {}

  /** Beats every third of the lease from now on (the first beat is the caller's). */
  start(): void {
    this.timer = setInterval(() => void this.beat(), heartbeatIntervalMs(this.parts.leaseMs));
  }

  close(): void {
    clearInterval(this.timer);
  }

  async beat(): Promise<void> {
    const { name, leaseMs, scripts, logger, lifecycle, lease, claims, requests, reaper, lostClaims, recordUsage } = this.parts;
    try {
      const token = lease.token;
      const reply = await scripts.heartbeat(name, token, leaseMs);
      if (reply === undefined) {
        await lease.onFenced(token);
        claims.wake();
      } else {
        reply.cancels.forEach((runId) => requests.cancel(runId));
        requests.preempt(reply.preempting);
        if (token === lease.token) claims.noteDrained(reply.drained);
        if (reply.stop) requests.stopOnRequest(reply.stop === 'now');
        // Ends a failover lost are recorded again first: what they free may be what a lost claim needs back.
        await claims.giveBackUnknown(token, reply.held);
        if (token === lease.token) await lostClaims.settle(lease.executor, token, reply.held);
        if (token === lease.token) await recordUsage(token);
      }
      await reaper.reap();
    } catch (error) {
      if (!lifecycle.stopped) logger.warn({ err: error }, `Heartbeat failed: ${(error as Error).message}`);
    }
  }
}
