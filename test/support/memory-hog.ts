/** A command for tests of what runs use: a node process holding memory it wrote to, busy on one CPU for a while. */

/** Holds `megabytes` of memory it wrote to, busy for `busyMs` on one CPU, then idle for `restMs` before it exits. */
export function memoryHog(megabytes: number, busyMs: number, restMs = 0): string[] {
  const script = `const b = Buffer.alloc(${megabytes} * 1e6, 1); const t = Date.now(); while (Date.now() - t < ${busyMs}); setTimeout(() => b.length, ${restMs});`;
  return ['node', '-e', script];
}
