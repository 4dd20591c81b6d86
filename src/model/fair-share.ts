/**
 * Fair share (`fitq share`): among runs of equal priority the claim prefers
 * the user whose decayed usage, over their share, is lowest. Usage is
 * weighted resource-seconds (a running run's second counts `run`, each
 * unit of a resource its weight), halving every half-life; it is counted
 * from run starts and ends in Redis (lua/includes/fairshare/). Settings and
 * shares live in the hash `fair-share` (`off`, `preempt`, `halfLife`, `w:<resource>`,
 * `share:<user>`); this is the one place their fields are named, typed
 * values checked, and the script's reply read in TypeScript.
 */
import { UsageError } from '../errors.js';
import { MAX_RESOURCE_NAME_LENGTH, RESOURCE_NAME_PATTERN } from '../resources/spec.js';
import { parseDuration } from '../units/duration.js';
import { quote } from '../text/quote.js';
import { checkUserName } from './stager.js';

/** The weight of a running run itself, per second (beside its resources'). */
export const RUN_WEIGHT = 'run';
/** Shares and weights above this are refused (a typo, not a policy). */
const MOST = 1_000_000;

/** One change, as setFairShare-2.lua takes it. */
export interface FairShareOp {
  op: 'set' | 'del' | 'halfLife' | 'forget';
  field: string;
  value?: string;
}

export interface FairShareUser {
  user: string;
  /** Decayed usage, weighted resource-seconds. */
  usage: number;
  share: number;
  /** How much of their share they have used: their part of all usage over their part of the shares (1: all of it). */
  used: number;
  /** Their place in the claim's order (0 first; users alike share one). */
  rank: number;
  /** What their running runs add to their usage per second. */
  rate: number;
}

export interface FairShareState {
  /** Whether the claim orders by fair share (`fitq share set --off` turns it off). */
  on: boolean;
  /** Whether runs of users over their share may be preempted (`fitq share set --preempt`). */
  preempt: boolean;
  halfLifeMs: number;
  /** Weight per unit per second, by resource (`run`: per running run). */
  weights: ReadonlyMap<string, number>;
  /** Users with usage or a share, in the claim's order. */
  users: FairShareUser[];
}

const shareField = (user: string): string => `share:${user}`;
const weightField = (name: string): string => `w:${name}`;

/** A positive (or, for weights, non-negative) decimal as typed; a UsageError quoting the spec otherwise. */
function parseNumber(spec: string, value: string, what: string, zero: boolean): string {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || number > MOST || (!zero && number === 0)) {
    throw new UsageError(`invalid ${quote(spec)}: ${what} is a ${zero ? 'non-negative' : 'positive'} number up to ${MOST}`);
  }
  return String(number);
}

/** `NAME=VALUE`, split at its first `=`; a UsageError quoting it otherwise. */
function splitSpec(spec: string, example: string): [string, string] {
  const at = spec.indexOf('=');
  if (at <= 0 || at === spec.length - 1) throw new UsageError(`expected NAME=VALUE such as ${example}, got ${quote(spec)}`);
  return [spec.slice(0, at), spec.slice(at + 1)];
}

/** Shares as typed (`alice=2 bob=1`): set ops. */
export function shareOps(specs: readonly string[]): FairShareOp[] {
  return specs.map((spec) => {
    const [user, value] = splitSpec(spec, 'alice=2');
    return { op: 'set', field: shareField(checkUserName(user, 'user')), value: parseNumber(spec, value, 'a share', false) };
  });
}

/** Users' shares removed (back to 1). */
export function shareRemoveOps(users: readonly string[]): FairShareOp[] {
  return users.map((user) => ({ op: 'del', field: shareField(checkUserName(user, 'user')) }));
}

function checkWeightName(name: string, spec: string): string {
  if (name !== RUN_WEIGHT && (!RESOURCE_NAME_PATTERN.test(name) || name.length > MAX_RESOURCE_NAME_LENGTH)) {
    throw new UsageError(`invalid ${quote(spec)}: weigh a resource name, or ${RUN_WEIGHT} (a running run itself)`);
  }
  return name;
}

/** Weights as typed (`gpu=10 cpu=1 mem=0`, per unit per second; `run=1` per running run): set ops. */
export function weightOps(specs: readonly string[]): FairShareOp[] {
  return specs.map((spec) => {
    const [name, value] = splitSpec(spec, 'gpu=10');
    return { op: 'set', field: weightField(checkWeightName(name, spec)), value: parseNumber(spec, value, 'a weight', true) };
  });
}

/** Weights removed (back to their defaults). */
export function weightRemoveOps(names: readonly string[]): FairShareOp[] {
  return names.map((name) => ({ op: 'del', field: weightField(checkWeightName(name, name)) }));
}

/** A new half-life as typed (`--half-life 7d`). */
export function halfLifeOp(text: string): FairShareOp {
  const ms = parseDuration('--half-life', text);
  if (ms < 1000) throw new UsageError(`expected --half-life to be at least 1s, got ${quote(text)}`);
  return { op: 'halfLife', field: String(ms) };
}

/** Fair share turned on or off. */
export const switchOp = (on: boolean): FairShareOp => (on ? { op: 'del', field: 'off' } : { op: 'set', field: 'off', value: '1' });

/** Preemption of runs of users over their share turned on or off. */
export const preemptOp = (on: boolean): FairShareOp => (on ? { op: 'set', field: 'preempt', value: '1' } : { op: 'del', field: 'preempt' });

/** Users' usage forgotten (none named: everyone's). */
export const forgetOps = (users: readonly string[]): FairShareOp[] =>
  users.length === 0 ? [{ op: 'forget', field: '' }] : users.map((user) => ({ op: 'forget', field: checkUserName(user, 'user') }));

/** readFairShare-2.lua's reply. */
export function parseFairShareReply(reply: unknown): FairShareState {
  const [on, halfLife, weights, users, preempt] = reply as [number, string, string[], string[], number];
  const weightMap = new Map<string, number>();
  for (let i = 0; i < weights.length; i += 2) weightMap.set(weights[i]!, Number(weights[i + 1]));
  const list: FairShareUser[] = [];
  for (let i = 0; i < users.length; i += 6) {
    list.push({
      user: users[i]!, usage: Number(users[i + 1]), share: Number(users[i + 2]), used: Number(users[i + 3]),
      rank: Number(users[i + 4]), rate: Number(users[i + 5]),
    });
  }
  return { on: on === 1, preempt: preempt === 1, halfLifeMs: Number(halfLife), weights: weightMap, users: list };
}
