/**
 * The worker's registration: its token, and the executor running the runs
 * claimed under it. When the registration is gone (reaped, or Redis lost its
 * data), its runs are stopped and the worker registers anew with a fresh
 * token and executor; calls made with an older token are ignored.
 */
import type { Logger } from 'pino';
import { refusalOf } from '../queue/script-codes.js';
import type { Scripts } from '../queue/scripts.js';
import type { Executor } from './executor.js';
import { GIVE_UP_AFTER_GRACE_MS, type Lifecycle } from './lifecycle.js';
import type { ResolvedWorkerOptions } from './options.js';
import { registrationFor, within } from './registration.js';

/** The reason recorded for runs a worker stops because its registration is gone. */
const LOST_REGISTRATION = 'its worker lost its registration';

export interface LeaseParts {
  options: ResolvedWorkerOptions;
  scripts: Scripts;
  logger: Logger;
  lifecycle: Lifecycle;
  /** A fresh execution queue, writing under `token`. */
  createExecutor: (token: string) => Executor;
  /** Stops the worker for good with this one-line reason. */
  fail: (failure: string) => void;
  /** Checks whether Redis may evict keys now (see eviction-guard.ts): why, if it may. */
  mayEvict: () => Promise<string | undefined>;
}

export class Lease {
  private currentToken: string;
  private currentExecutor: Executor;
  private reregistration: Promise<void> | undefined;
  /** Said once: the registration was lost while stopping. */
  private lostWhileStoppingSaid = false;
  /** Said once per loss: the registration was lost; it is not registered again while Redis may evict keys. */
  private lostSaid = false;
  private notRegisteringSaid = false;
  /** Whether this worker is drained (fitq drain), as its last claim or heartbeat said: it registers again drained. */
  drained = false;

  constructor(
    private readonly parts: LeaseParts,
    token: string,
  ) {
    this.currentToken = token;
    this.currentExecutor = parts.createExecutor(token);
  }

  get token(): string {
    return this.currentToken;
  }

  /** The executor of the current registration. */
  get executor(): Executor {
    return this.currentExecutor;
  }

  /** The re-registration under way, if any: a stopping worker waits for it. */
  get reregistering(): Promise<void> | undefined {
    return this.reregistration;
  }

  /**
   * This worker's registration is gone. Only one re-registration runs at a
   * time. A stopping worker does not register again, but its runs must still
   * go: the old registration's runs are re-staged or lost, and may start
   * elsewhere.
   */
  onFenced(staleToken: string): Promise<void> {
    if (staleToken !== this.currentToken || this.reregistration) return this.reregistration ?? Promise.resolve();
    const { lifecycle, logger, options } = this.parts;
    if (lifecycle.stopping) {
      if (!this.lostWhileStoppingSaid) {
        this.lostWhileStoppingSaid = true;
        logger.error(`Worker ${options.name} lost its registration (lease expired or Redis lost its data) while stopping; stopping its runs`);
      }
      this.currentExecutor.abandonAll({ cause: 'abandon', reason: LOST_REGISTRATION });
      return Promise.resolve();
    }
    lifecycle.fenced();
    this.reregistration = this.reregister().finally(() => {
      this.reregistration = undefined;
      lifecycle.reregistered();
    });
    return this.reregistration;
  }

  /**
   * Stops the runs of the lost registration (their results can no longer be
   * recorded), waits until they are gone so nothing is oversubscribed, then
   * registers anew with a fresh execution queue, unless Redis may evict
   * keys (it would lose this registration too): then it is tried again at
   * the next heartbeat.
   */
  private async reregister(): Promise<void> {
    const { options, scripts, logger } = this.parts;
    if (!this.lostSaid) logger.error(`Worker ${options.name} lost its registration (lease expired or Redis lost its data); stopping its runs`);
    this.lostSaid = true;
    const old = this.currentExecutor;
    old.abandonAll({ cause: 'abandon', reason: LOST_REGISTRATION });
    await within(old.whenIdle(), options.killGraceMs + GIVE_UP_AFTER_GRACE_MS);
    // Stopped meanwhile: it registers no more.
    if (this.parts.lifecycle.stopping) return;
    const problem = await this.parts.mayEvict();
    if (problem !== undefined) {
      if (!this.notRegisteringSaid) logger.error(`Not registering again: ${problem}`);
      this.notRegisteringSaid = true;
      return;
    }
    if (this.parts.lifecycle.stopping) return;
    const registration = { ...registrationFor(options), drained: this.drained };
    if (!(await scripts.registerWorker(registration))) {
      this.parts.fail(refusalOf('workerNameTaken', options.name).message);
      return;
    }
    this.currentToken = registration.token;
    this.currentExecutor = this.parts.createExecutor(registration.token);
    this.lostSaid = false;
    this.notRegisteringSaid = false;
    logger.info(`Worker ${options.name} registered again`);
  }
}
