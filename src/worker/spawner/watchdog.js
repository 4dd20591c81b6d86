// The watchdog: a tiny `sh` process per spawn helper (helper.js) that
// outlives it. The helper tells it, over a pipe, the process group of each
// run it lets go (`+GROUP GRACE`) and of each that has exited (`-GROUP`).
// When the pipe closes with groups still listed (the helper is gone: its
// worker died and it followed, or it was killed itself, even by SIGKILL),
// the watchdog terminates those groups: SIGTERM, then SIGKILL after the
// longest grace it was told, so no run keeps running unobserved.
//
// Plain JavaScript importing nothing but Node, as helper.js is.
import { spawn } from 'node:child_process';

const SCRIPT = `
trap '' INT TERM HUP
groups=' '
grace=0
while IFS=' ' read -r line seconds; do
  case "$line" in
    +*) groups="$groups\${line#+} "; [ "\${seconds:-0}" -gt "$grace" ] && grace=$seconds ;;
    -*) kept=' '; for g in $groups; do [ "$g" = "\${line#-}" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep "$grace"
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`;

/**
 * The groups the watchdog must end if the helper goes, and the `sh` that
 * would end them. If that `sh` dies early, a new one is started and told
 * every group still listed; if none can be started, `watch` throws (the
 * run is then not let go).
 */
export class Watchdog {
  /** Listed groups, each with its grace in seconds. */
  #groups = new Map();
  #child;

  /** Lists a group (before its run is let go, so it is never unwatched); throws if no watchdog can run. */
  watch(group, graceSeconds) {
    this.#groups.set(group, graceSeconds);
    try {
      this.#write(`+${group} ${graceSeconds}\n`);
    } catch (error) {
      this.#groups.delete(group);
      throw error;
    }
  }

  /** A group whose run has exited (and been killed whole): nothing of it is left to end. */
  forget(group) {
    if (!this.#groups.delete(group)) return;
    this.#child?.stdin.write(`-${group}\n`);
  }

  /** Lines reach the pipe at once while it has room (a pipe write of a short line does). */
  #write(line) {
    (this.#child ?? this.#start()).stdin.write(line);
  }

  /** A new watchdog told every listed group (its stdin in line: the previous one died with the old). */
  #start() {
    const child = spawn('sh', ['-c', SCRIPT, 'fitq-watchdog'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    if (child.pid === undefined) {
      // (Its 'error' comes on the next tick, with what this process ran out of.)
      child.once('error', () => {});
      throw Object.assign(new Error('the run watchdog could not start'), { code: 'EAGAIN' });
    }
    child.stdin.on('error', () => {});
    child.once('exit', () => {
      if (this.#child === child) this.#child = undefined;
      // A new one, told the groups still listed; should it fail, the next watch() tries again.
      if (this.#groups.size > 0) {
        try {
          this.#start();
        } catch {
          // No watchdog for now: runs let go meanwhile are refused (watch throws).
        }
      }
    });
    child.unref();
    child.stdin.unref?.();
    this.#child = child;
    for (const [group, grace] of this.#groups) child.stdin.write(`+${group} ${grace}\n`);
    return child;
  }
}
