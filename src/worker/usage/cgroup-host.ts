/**
 * Where a worker may put its runs in cgroups of their own, found once at
 * start: the cgroup v2 hierarchy (a delegated systemd unit, a container) or
 * the v1 hierarchies hosts still mount (`/sys/fs/cgroup/memory/…`, writable
 * as root). The worker's cgroups go below its own (what holds the worker
 * holds its runs too), in a directory of its own, `fitq.<pid>`; each run's
 * below that (run-cgroup.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { processGoneHere } from '../../model/liveness.js';

/** A demand a worker can hold its runs to: `mem` (memory limit) and `cpu` (CPU quota). */
export type Enforced = 'mem' | 'cpu';
export const ENFORCEABLE: readonly Enforced[] = ['mem', 'cpu'];

/** The directories, one per hierarchy, that a run's cgroup and the worker's go in. */
export interface CgroupLayout {
  version: 1 | 2;
  /** v1: the worker's directory in each hierarchy it uses; v2: its one directory. */
  memory: string;
  cpuacct: string;
  /** v1 only when `cpu` is enforced (v2: the same directory). */
  cpu?: string;
}

/** `N:controllers:/path` lines of /proc/self/cgroup, by controller ("" for v2). */
function ownCgroups(): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1]!.split(',')) own.set(controller, match[2]!);
  }
  return own;
}

interface Mount {
  root: string;
  point: string;
  type: string;
  options: string[];
}

/** The cgroup mounts of /proc/self/mountinfo. */
function cgroupMounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').flatMap((line) => {
    const [before, after] = line.split(' - ');
    if (!before || !after) return [];
    const fields = before.split(' ');
    const [type, , superOptions = ''] = after.split(' ');
    if (type !== 'cgroup' && type !== 'cgroup2') return [];
    return [{ root: fields[3]!, point: fields[4]!, type, options: superOptions.split(',') }];
  });
}

/** The directory of `own` (a path in the hierarchy) under a mount of it, or undefined when the mount does not show it. */
function underMount(mount: Mount, own: string): string | undefined {
  if (mount.root !== '/' && own !== mount.root && !own.startsWith(`${mount.root}/`)) return undefined;
  const relative = mount.root === '/' ? own : own.slice(mount.root.length);
  return join(mount.point, relative);
}

/** Removes the directories left by workers that are gone (`fitq.<pid>`), with the run cgroups left empty in them. */
function removeStale(parent: string): void {
  for (const entry of safeReaddir(parent)) {
    const match = /^fitq\.(\d+)$/.exec(entry);
    if (!match || !processGoneHere(hostname(), Number(match[1]))) continue;
    const dir = join(parent, entry);
    for (const run of safeReaddir(dir)) tryRmdir(join(dir, run));
    tryRmdir(dir);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

export function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** The worker's own directory below `parent`, made (its stale siblings removed first). */
function makeWorkerDir(parent: string): string {
  removeStale(parent);
  const dir = join(parent, `fitq.${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The v1 layout, or why not. */
function v1Layout(mounts: Mount[], own: Map<string, string>, enforce: ReadonlySet<Enforced>): CgroupLayout | string {
  const needed = ['memory', 'cpuacct', ...(enforce.has('cpu') ? ['cpu'] : [])];
  const dirs = new Map<string, string>();
  for (const controller of needed) {
    const mount = mounts.find((candidate) => candidate.type === 'cgroup' && candidate.options.includes(controller));
    const path = own.get(controller);
    const dir = mount && path !== undefined ? underMount(mount, path) : undefined;
    if (dir === undefined) return `the cgroup v1 ${controller} controller is not mounted where this process can see its own cgroup`;
    dirs.set(controller, dir);
  }
  const made = new Map<string, string>();
  /** Co-mounted controllers (`cpu,cpuacct`) share one directory. */
  const byParent = new Map<string, string>();
  for (const [controller, dir] of dirs) {
    try {
      const workerDir = byParent.get(dir) ?? makeWorkerDir(dir);
      byParent.set(dir, workerDir);
      made.set(controller, workerDir);
    } catch (error) {
      for (const done of byParent.values()) tryRmdir(done);
      return `cannot create a cgroup in ${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): it needs root, or a delegated hierarchy`;
    }
  }
  return { version: 1, memory: made.get('memory')!, cpuacct: made.get('cpuacct')!, ...(made.has('cpu') ? { cpu: made.get('cpu')! } : {}) };
}

function enableControllers(dir: string, controllers: readonly string[]): void {
  writeFileSync(join(dir, 'cgroup.subtree_control'), controllers.map((name) => `+${name}`).join(' '));
}

/**
 * The v2 layout, or why not. A cgroup that holds processes cannot hand
 * controllers to cgroups below it, so when the worker's own holds only the
 * worker and its helpers (a delegated unit), they move to a leaf of their
 * own (`fitq-worker`) first, as systemd's delegation rules ask.
 */
function v2Layout(mounts: Mount[], own: Map<string, string>, enforce: ReadonlySet<Enforced>): CgroupLayout | string {
  const mount = mounts.find((candidate) => candidate.type === 'cgroup2');
  const path = own.get('');
  const base = mount && path !== undefined ? underMount(mount, path) : undefined;
  if (base === undefined) return 'no cgroup v2 hierarchy shows this process its own cgroup';
  const controllers = ['memory', ...(enforce.has('cpu') ? ['cpu'] : [])];
  const available = readFileSync(join(base, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  const missing = controllers.filter((name) => !available.includes(name));
  if (missing.length > 0) return `the cgroup v2 ${missing.join(' and ')} controller${missing.length > 1 ? 's are' : ' is'} not delegated to ${base}`;
  try {
    try {
      enableControllers(base, controllers);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EBUSY') throw error;
      const leaf = join(base, 'fitq-worker');
      const theirs = readFileSync(join(base, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      const strangers = theirs.filter((pid) => pid !== process.pid && parentOf(pid) !== process.pid);
      if (strangers.length > 0) return `${base} holds processes other than this worker's (${strangers.slice(0, 5).join(', ')}), so cgroups below it cannot have controllers: start the worker in a cgroup of its own (systemd-run --scope -p Delegate=yes …)`;
      mkdirSync(leaf, { recursive: true });
      for (const pid of theirs) writeFileSync(join(leaf, 'cgroup.procs'), String(pid));
      enableControllers(base, controllers);
    }
    const dir = makeWorkerDir(base);
    enableControllers(dir, controllers);
    return { version: 2, memory: dir, cpuacct: dir, ...(enforce.has('cpu') ? { cpu: dir } : {}) };
  } catch (error) {
    return `cannot set up cgroups in ${base} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): it needs a delegated cgroup (systemd-run --scope -p Delegate=yes …) or root`;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * The worker's cgroup directories, made; or why it cannot have them (not
 * Linux, no hierarchy it may write). v2 first where its controllers are
 * there, else v1.
 */
export function openCgroupLayout(enforce: ReadonlySet<Enforced>): CgroupLayout | { why: string } {
  if (process.platform !== 'linux') return { why: `cgroups are Linux's (this is ${process.platform})` };
  if (!existsSync('/proc/self/cgroup')) return { why: '/proc/self/cgroup is not there' };
  const own = ownCgroups();
  const mounts = cgroupMounts();
  const v1 = mounts.some((mount) => mount.type === 'cgroup' && mount.options.includes('memory'));
  const layout = v1 ? v1Layout(mounts, own, enforce) : v2Layout(mounts, own, enforce);
  return typeof layout === 'string' ? { why: layout } : layout;
}

/** Removes the worker's directories (once its runs' are gone); what a run left in them keeps them, until the next worker's start. */
export function closeCgroupLayout(layout: CgroupLayout): void {
  for (const dir of new Set([layout.memory, layout.cpuacct, ...(layout.cpu ? [layout.cpu] : [])])) tryRmdir(dir);
}
