/**
 * Ctrl-C (SIGINT) and SIGTERM for a foreground worker, caught from before it
 * registers, so none is lost to the default action while it starts. Once it
 * is up, the first stops it gracefully and the next terminates its runs
 * (FitqWorker.interrupt). One that came while it started stops it as soon as
 * it is up; a second one while it still starts ends the process at once, as
 * if nothing caught the signal.
 */
import type { FitqWorker } from './worker.js';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Starts a worker with `start`, handing it the interrupts until it is done. */
export async function startWithInterrupts(start: () => Promise<FitqWorker>): Promise<FitqWorker> {
  let worker: FitqWorker | undefined;
  let early = 0;
  const release = () => SIGNALS.forEach((signal) => process.off(signal, onSignal));
  function onSignal(signal: NodeJS.Signals): void {
    if (worker) {
      void worker.interrupt();
      return;
    }
    early += 1;
    if (early > 1) {
      release();
      process.kill(process.pid, signal);
      return;
    }
    // No logger yet: the worker's own log starts once it is up.
    process.stderr.write('Stopping as soon as the worker has registered; press Ctrl-C again to quit now\n');
  }
  SIGNALS.forEach((signal) => process.on(signal, onSignal));
  try {
    worker = await start();
  } catch (error) {
    release();
    throw error;
  }
  void worker.done.then(release);
  for (let i = 0; i < early; i++) void worker.interrupt();
  return worker;
}
