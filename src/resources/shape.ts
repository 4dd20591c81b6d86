/**
 * Demand shapes: the key of the staged index a run waits in
 * (`staged:<shape>`), what a claim reads of a run before it reads the run.
 * `cpu=1,mem=2;gpus=0,3;t=600000`: the exact demands, `name=amount` sorted
 * by name and joined by commas ("none" for none); then, for a run pinned to
 * GPU devices, `;gpus=` and their indices; then, for a run with a time
 * limit, `;t=` and its ms; then, for a run of a project (model/project.ts),
 * `;p=` and the project; then, for a run whose stager is known, `;u=` and
 * the user's name. The claim then knows each candidate's limit, and whose
 * quotas it counts against, from its shape alone, and the first run of a
 * shape stands for all its runs: one user's (or project's) runs over their
 * quota never stand in front of another's.
 *
 * This module is the grammar's one owner in TypeScript; its Lua twin is
 * lua/includes/shape/parseShape.lua and formatShape.lua (test/queue/shape-lua.test.ts
 * holds the two to each other).
 */
import { arrayOfLimit } from './array-limit.js';
import { formatMicros, MAX_MICROS, parseDecimal } from './amount.js';
import { MAX_DEVICE_INDEX } from './devices.js';
import { MAX_RESOURCE_NAME_LENGTH, RESOURCE_NAME_PATTERN, sortResources, type Resources } from './spec.js';
import { USER_NAME_PATTERN } from './user-name.js';

/** A shape's parts. */
export interface Shape {
  /** Exact demands (never zero). */
  demands: Resources;
  /** GPU devices its runs are pinned to, ascending (empty: none). */
  gpus: readonly number[];
  /** Its runs' time limit in ms, if they have one. */
  timeLimitMs?: number | undefined;
  /** The project of its runs (model/project.ts), if any. */
  project?: string | undefined;
  /** Who staged its runs (stager.ts), if known. */
  user?: string | undefined;
}

/** The shape of runs without demands. */
export const NO_DEMANDS = 'none';

/** The longest time limit a shape holds (365 days, as --time-limit takes it). */
const MAX_SHAPE_LIMIT_MS = 365 * 86_400_000;

/** A shape as its runs' staged index is named: "a=1,b=2", "none", "gpu=1;gpus=3;t=600000;p=vision;u=alice". */
export function formatShape(shape: Shape): string {
  const demands = [...sortResources(shape.demands)].map(([name, micros]) => `${name}=${formatMicros(micros)}`);
  let text = demands.join(',') || NO_DEMANDS;
  if (shape.gpus.length > 0) text += `;gpus=${shape.gpus.join(',')}`;
  if (shape.timeLimitMs !== undefined) text += `;t=${shape.timeLimitMs}`;
  if (shape.project !== undefined) text += `;p=${shape.project}`;
  if (shape.user !== undefined) text += `;u=${shape.user}`;
  return text;
}

/**
 * A shape's parts, or undefined when the text is not one formatShape
 * writes (a shape written into Redis by hand): exactly as the Lua twin
 * judges it.
 */
export function parseShape(text: string): Shape | undefined {
  let rest = text;
  let user: string | undefined;
  const staged = /^(.*);u=([^;]*)$/s.exec(rest);
  if (staged) {
    if (!USER_NAME_PATTERN.test(staged[2]!)) return undefined;
    rest = staged[1]!;
    user = staged[2]!;
  }
  let project: string | undefined;
  const ofProject = /^(.*);p=([^;]*)$/s.exec(rest);
  if (ofProject) {
    if (!USER_NAME_PATTERN.test(ofProject[2]!)) return undefined;
    rest = ofProject[1]!;
    project = ofProject[2]!;
  }
  let timeLimitMs: number | undefined;
  const limit = /^(.*);t=([^;]*)$/s.exec(rest);
  if (limit) {
    if (!/^[1-9]\d{0,11}$/.test(limit[2]!) || Number(limit[2]) > MAX_SHAPE_LIMIT_MS) return undefined;
    rest = limit[1]!;
    timeLimitMs = Number(limit[2]);
  }
  let gpus: number[] = [];
  const pinned = /^([^;]*);gpus=(.*)$/s.exec(rest);
  if (pinned) {
    rest = pinned[1]!;
    gpus = pinned[2]!.split(',').map((part) => (/^\d+$/.test(part) && String(Number(part)) === part ? Number(part) : NaN));
    if (gpus.some((index) => !(index <= MAX_DEVICE_INDEX))) return undefined;
  }
  const demands = rest === NO_DEMANDS ? new Map<string, bigint>() : parseShapeDemands(rest);
  if (demands === undefined) return undefined;
  return {
    demands, gpus,
    ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
    ...(project === undefined ? {} : { project }),
    ...(user === undefined ? {} : { user }),
  };
}

/** "a=1,b=2" as written (each name once, each amount positive and as formatMicros writes it), or undefined. */
function parseShapeDemands(text: string): Resources | undefined {
  const demands = new Map<string, bigint>();
  for (const part of text.split(',')) {
    const match = /^([A-Za-z][A-Za-z0-9_.-]*)=([\d.]+)$/.exec(part);
    if (!match || match[1]!.length > MAX_RESOURCE_NAME_LENGTH || !RESOURCE_NAME_PATTERN.test(match[1]!)) return undefined;
    let micros: bigint;
    try {
      micros = parseDecimal(match[2]!);
    } catch {
      return undefined;
    }
    if (micros <= 0n || micros > MAX_MICROS || formatMicros(micros) !== match[2] || demands.has(match[1]!)) return undefined;
    demands.set(match[1]!, micros);
  }
  return sortResources(demands);
}

/**
 * A shape's group: the names of the resources its runs demand, sorted and
 * joined by commas ("cpu,mem"), "none" for none; arrays' limits
 * (`array.<id>`) left out, so a thousand arrays of the same demands are one
 * group. A worker that lacks one of them (and the pool too) can run no
 * shape of the group.
 */
export function shapeGroup(shape: Shape): string {
  return [...sortResources(shape.demands).keys()].filter((name) => arrayOfLimit(name) === undefined).join(',') || NO_DEMANDS;
}

/**
 * The same shape without its time limit, project and user (a metric's
 * label: one series per shape, not per limit, project or user; runs carry
 * their own `user`).
 */
export function shapeLabel(text: string): string {
  const shape = parseShape(text);
  return shape === undefined ? text : formatShape({ ...shape, timeLimitMs: undefined, project: undefined, user: undefined });
}
