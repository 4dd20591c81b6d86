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
    return new Promise((resolve) => {
      const stdin = this.child.stdin;
      if (!stdin || stdin.destroyed) return resolve();
      stdin.write(`+${processGroup}\n`, () => resolve());
    });
  }

  release(processGroup: number): void {
    this.child.stdin?.write(`-${processGroup}\n`);
  }

  /** Ends the watchdog; groups still listed are terminated. */
  close(): void {
    this.closing = true;
    this.child.stdin?.end();
  }
}
