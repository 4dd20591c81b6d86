/**
 * A worker's lifecycle: one state at a time, moved only by its named
 * transitions; one stop sequence however many stops come; a give-up deadline
 * started by the first stop "now" only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Lifecycle } from '../../src/worker/lifecycle.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Lifecycle', () => {
  it('goes from running to reregistering and back when fenced', () => {
    const lifecycle = new Lifecycle(1000);
    expect(lifecycle.state).toBe('running');
    lifecycle.fenced();
    expect(lifecycle.state).toBe('reregistering');
    expect(lifecycle.stopping).toBe(false);
    lifecycle.reregistered();
    expect(lifecycle.state).toBe('running');
  });

  it('stops once, stays stopping when a re-registration ends during the stop, and is stopped once released', async () => {
    const lifecycle = new Lifecycle(1000);
    lifecycle.fenced();
    const release = vi.fn(() => Promise.resolve());
    const first = lifecycle.stop('graceful', release);
    expect(lifecycle.state).toBe('stopping');
    expect(lifecycle.stopping).toBe(true);
    expect(lifecycle.stopped).toBe(false);
    lifecycle.reregistered();
    lifecycle.fenced();
    expect(lifecycle.state).toBe('stopping');
    expect(lifecycle.stop('now', release)).toBe(first);
    expect(release).toHaveBeenCalledTimes(1);
    lifecycle.released();
    expect(lifecycle.state).toBe('stopped');
    expect(lifecycle.stopping).toBe(true);
    expect(lifecycle.stopped).toBe(true);
    await first;
  });

  it('escalates the stop mode from graceful to now, never back', () => {
    const lifecycle = new Lifecycle(1000);
    expect(lifecycle.stopMode).toBeUndefined();
    void lifecycle.stop('graceful', () => Promise.resolve());
    expect(lifecycle.stopMode).toBe('graceful');
    void lifecycle.stop('now', () => Promise.resolve());
    expect(lifecycle.stopMode).toBe('now');
    void lifecycle.stop('graceful', () => Promise.resolve());
    expect(lifecycle.stopMode).toBe('now');
    lifecycle.released();
  });

  it('gives up on Redis a set time after the first stop now, not after a graceful one', async () => {
    vi.useFakeTimers();
    const lifecycle = new Lifecycle(1000);
    let givenUp = false;
    void lifecycle.givenUp.then(() => (givenUp = true));
    void lifecycle.stop('graceful', () => Promise.resolve());
    await vi.advanceTimersByTimeAsync(5000);
    expect(givenUp).toBe(false);
    void lifecycle.stop('now', () => Promise.resolve());
    await vi.advanceTimersByTimeAsync(600);
    // A second stop now keeps the first deadline.
    void lifecycle.stop('now', () => Promise.resolve());
    await vi.advanceTimersByTimeAsync(500);
    expect(givenUp).toBe(true);
  });

  it('clears the give-up deadline once released', async () => {
    vi.useFakeTimers();
    const lifecycle = new Lifecycle(1000);
    let givenUp = false;
    void lifecycle.givenUp.then(() => (givenUp = true));
    void lifecycle.stop('now', () => Promise.resolve());
    lifecycle.released();
    await vi.advanceTimersByTimeAsync(2000);
    expect(givenUp).toBe(false);
  });

  it('starts no give-up deadline for a stop now once stopped', () => {
    vi.useFakeTimers();
    const lifecycle = new Lifecycle(1000);
    void lifecycle.stop('graceful', () => Promise.resolve());
    lifecycle.released();
    void lifecycle.stop('now', () => Promise.resolve());
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts interrupts', () => {
    const lifecycle = new Lifecycle(1000);
    expect(lifecycle.interrupted()).toBe(1);
    expect(lifecycle.interrupted()).toBe(2);
  });
});
