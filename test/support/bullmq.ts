/**
 * BullMQ's own classes opened on a fitq namespace (closed after each test),
 * an event recorder that waits for the events fitq's scripts add to the
 * queue's stream, and `fitq runs --json` sorted into BullMQ's states.
 */
import { Queue, QueueEvents, type QueueEventsListener } from 'bullmq';
import { afterEach, expect } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { RunStatus } from '../../src/model/run-record.js';
import { fitq, redisUrl } from './fitq.js';

/** The BullMQ state each fitq status is kept in. */
export const BULLMQ_STATE = {
  staged: 'prioritized',
  held: 'waiting-children',
  running: 'active',
  completed: 'completed',
  failed: 'failed',
  canceled: 'failed',
  lost: 'failed',
  rejected: 'failed',
  timeout: 'failed',
} as const satisfies Record<RunStatus, string>;

export type FitqJobState = (typeof BULLMQ_STATE)[RunStatus];
export const FITQ_JOB_STATES: readonly FitqJobState[] = ['prioritized', 'active', 'completed', 'failed'];

/** The events fitq adds to the stream beyond BullMQ's own, with their fields. */
export interface FitqQueueEventsListener extends QueueEventsListener {
  canceled: (args: { jobId: string; reason: string }, id: string) => void;
  lost: (args: { jobId: string; reason: string }, id: string) => void;
  rejected: (args: { jobId: string; reason: string }, id: string) => void;
  restaged: (args: { jobId: string; reason: string; prev?: string }, id: string) => void;
}

const RECORDED = ['added', 'waiting', 'active', 'completed', 'failed', 'canceled', 'lost', 'rejected', 'restaged', 'removed'] as const;
export type RecordedEvent = (typeof RECORDED)[number];

export interface HeardEvent {
  event: RecordedEvent;
  jobId: string;
  /** The event's other fields (`returnvalue` parsed, as QueueEvents gives it). */
  args: Record<string, unknown>;
}

export interface EventRecorder {
  readonly queueEvents: QueueEvents;
  /** Every event heard so far, in stream order. */
  readonly heard: readonly HeardEvent[];
  /** The events of one job so far, by name. */
  of(jobId: string): RecordedEvent[];
  /** Resolves with the `nth` (1-based) `event` of `jobId` once it has been heard; fails after `timeoutMs`. */
  next(event: RecordedEvent, jobId: string, nth?: number, timeoutMs?: number): Promise<HeardEvent>;
}

const opened: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const instance of opened.splice(0).reverse()) await instance.close();
});

const connection = () => ({ url: redisUrl() });

/** The namespace's BullMQ queue, as Bull Board or any BullMQ user opens it. */
export function openRunQueue(client: FitqClient): Queue {
  const queue = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: connection() });
  opened.push(queue);
  return queue;
}

/** A QueueEvents on the namespace's queue, reading its stream from the start, recording every event it hears. */
export async function recordEvents(client: FitqClient): Promise<EventRecorder> {
  const queueEvents = new QueueEvents(client.keys.queue.name, {
    prefix: client.keys.queue.prefix,
    connection: connection(),
    lastEventId: '0-0',
  });
  opened.push(queueEvents);
  const heard: HeardEvent[] = [];
  const waiters = new Set<() => void>();
  for (const event of RECORDED) {
    queueEvents.on<FitqQueueEventsListener>(event, (args: { jobId: string }) => {
      const { jobId, ...rest } = args;
      heard.push({ event, jobId, args: rest });
      for (const check of [...waiters]) check();
    });
  }
  await queueEvents.waitUntilReady();
  const find = (event: RecordedEvent, jobId: string, nth: number) =>
    heard.filter((entry) => entry.event === event && entry.jobId === jobId)[nth - 1];
  return {
    queueEvents,
    heard,
    of: (jobId) => heard.filter((entry) => entry.jobId === jobId).map((entry) => entry.event),
    next(event, jobId, nth = 1, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = find(event, jobId, nth);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const so = heard.map((entry) => `${entry.jobId} ${entry.event}`).join('\n');
          reject(new Error(`timed out after ${timeoutMs} ms waiting for event ${event} #${nth} of job ${jobId}; heard:\n${so}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

export interface RunsByState {
  /** Run ids (sorted) in each BullMQ state, from `fitq runs --json`. */
  ids: Record<FitqJobState, string[]>;
  /** How many runs have each fitq status. */
  statuses: Partial<Record<RunStatus, number>>;
}

/** `fitq runs --json`, sorted into the BullMQ state each run's job is in. */
export async function fitqRunsByState(queue: string): Promise<RunsByState> {
  const listed = await fitq(['runs', '--all', '--json'], { queue });
  expect(listed.exitCode, listed.stderr).toBe(0);
  const { runs } = JSON.parse(listed.stdout) as { runs: { id: string; status: RunStatus }[] };
  // (Held runs, in waiting-children, only when there are some.)
  const ids = { prioritized: [], active: [], completed: [], failed: [] } as unknown as Record<FitqJobState, string[]>;
  const statuses: Partial<Record<RunStatus, number>> = {};
  for (const run of runs) {
    (ids[BULLMQ_STATE[run.status]] ??= []).push(run.id);
    statuses[run.status] = (statuses[run.status] ?? 0) + 1;
  }
  for (const state of FITQ_JOB_STATES) ids[state].sort();
  return { ids, statuses };
}

/** Stages with `fitq stage ARGS` and returns the run ids it printed. */
export async function stage(queue: string, args: string[], input?: string): Promise<string[]> {
  const staged = await fitq(['stage', ...args], { queue, ...(input === undefined ? {} : { input }) });
  expect(staged.exitCode, staged.stderr).toBe(0);
  return staged.stdout.trim().split('\n');
}
