/**
 * The watchdog: a tiny `sh` process per worker that outlives it. The worker
 * tells it, over a pipe, the process group of each run it starts (+PGID) and
 * ends (-PGID). When the pipe closes with groups still listed — the worker
 * died, even by SIGKILL — it terminates those groups (SIGTERM, then SIGKILL
 * after a grace period), so no run keeps running unobserved.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const WATCHDOG_SCRIPT = `
trap '' INT TERM HUP
groups=' '
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) kept=' '; for g in $groups; do [ "$g" = "\${line#-}" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep "$1"
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`;

export class Watchdog {
  private readonly child: ChildProcess;

  private closing = false;
  /** Lines not yet written, and who waits for them to be in the pipe. */
  private pending = '';
  private written: (() => void)[] = [];

  /** `onFailure` hears when the watchdog cannot start or dies early: runs would then go unwatched. */
  constructor(graceSeconds: number, onFailure: (message: string) => void) {
    this.child = spawn('sh', ['-c', WATCHDOG_SCRIPT, 'fitq-watchdog', String(graceSeconds)], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.child.on('error', (error) => onFailure(`the run watchdog could not start: ${error.message}`));
    this.child.on('exit', (code, signal) => {
      if (!this.closing) onFailure(`the run watchdog exited early (${signal ?? `exit code ${code}`})`);
    });
    this.child.stdin?.on('error', () => {});
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** Resolves once the watchdog's pipe has the group (it may then let the run go). */
  watch(processGroup: number): Promise<void> {
    return new Promise((resolve) => this.send(`+${processGroup}\n`, resolve));
  }

  release(processGroup: number): void {
    this.send(`-${processGroup}\n`);
  }

  /**
   * Lines sent in the same turn of the event loop go in one write: runs
   * start and end in bursts, and each write wakes the watchdog.
   */
  private send(line: string, onWritten?: () => void): void {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed) {
      onWritten?.();
      return;
    }
    if (this.pending === '') setImmediate(() => this.flush());
    this.pending += line;
    if (onWritten) this.written.push(onWritten);
  }

  private flush(): void {
    const lines = this.pending;
    const written = this.written;
    this.pending = '';
    this.written = [];
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed) written.forEach((resolve) => resolve());
    else stdin.write(lines, () => written.forEach((resolve) => resolve()));
  }

  /** Ends the watchdog; groups still listed are terminated. */
  close(): void {
    this.closing = true;
    if (this.pending !== '') this.flush();
    this.child.stdin?.end();
  }
}
