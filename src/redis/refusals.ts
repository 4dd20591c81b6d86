/**
 * What Redis refused, in one line for the user: a command the connection's
 * ACL user may not run, a write refused while Redis is out of memory, a
 * cluster that served no answer within the failover wait.
 */
import { FAILOVER_WAIT_MS } from './connection.js';

/**
 * One line for a command Redis refused to the connection's user (an ACL
 * without a permission fitq needs), or undefined for any other error.
 * `refused` says what was refused, e.g. "a command the execution queue needs".
 */
export function describeAclRefusal(error: Error, refused = 'a command'): string | undefined {
  // Scripts report a refused command, key or channel as "ERR The user executing the script can't …".
  if (!/\b(NOPERM|NOAUTH)\b|user executing the script can't/.test(error.message)) return undefined;
  return `Redis refused ${refused}: ${replyReason(error.message)} (the Redis user lacks a permission fitq needs)`;
}

/** A Redis error reply on one line, without the script position Redis adds to an error inside a script. */
function replyReason(message: string): string {
  return message
    .replace(/\s+/g, ' ')
    .replace(/ script: [0-9a-f]{40}, on @user_script:\d+\.?$/, '')
    .trim();
}

/**
 * Redis's reply when it refuses a command while out of memory (used memory
 * over its maxmemory: with noeviction it refuses writes instead of evicting):
 * the error itself, or in a MULTI that Redis discarded (EXECABORT) the
 * refusal of one of its commands; undefined for any other error.
 */
function outOfMemoryReply(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  const replies = [error, ...(Array.isArray(previous) ? previous : [])];
  return replies.map((reply) => (reply instanceof Error ? reply.message : '')).find((message) => /^OOM\b/.test(message));
}

/** Whether Redis refused this because it is out of memory (see outOfMemoryReply). */
export function isOutOfMemory(error: unknown): boolean {
  return outOfMemoryReply(error) !== undefined;
}

/**
 * One line for a command a Redis Cluster could not serve within the failover
 * wait: ioredis gives up on it with "Too many Cluster redirections. Last
 * error: …" once the slot's master and every replica of it stayed down (or
 * the cluster said CLUSTERDOWN) through its redirections. Undefined for
 * other errors.
 */
export function describeClusterStall(error: Error): string | undefined {
  const match = /^Too many Cluster redirections\. Last error: (?:\w*Error: )?(.*)$/s.exec(error.message);
  if (!match) return undefined;
  const last = match[1]!.trim() || 'none';
  return `the Redis Cluster served no answer for the namespace within ${FAILOVER_WAIT_MS / 1000}s (the master of its slot and every replica of it may be down; last error: ${last})`;
}

/**
 * One line for a command Redis refused because it is out of memory, or
 * undefined for any other error. fitq's scripts that write are refused
 * whole then, before they write anything (their `#!lua` line); reads go on.
 */
export function describeOutOfMemory(error: Error, refused = 'a command'): string | undefined {
  const reply = outOfMemoryReply(error);
  if (reply === undefined) return undefined;
  return `Redis refused ${refused}: ${replyReason(reply).replace(/\.$/, '')} (Redis is out of memory: raise its maxmemory, or free memory)`;
}
