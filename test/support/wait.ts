/**
 * Waiting for a condition with a deadline, for the few things no event announces
 * (a process gone, a file written by a run).
 */

/** Polls `probe` until it returns something other than undefined/false, or fails after `timeoutMs` (generous: CI runs three test files on two cores). */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
