/**
 * The run pages' output, followed live for every open page over one Redis
 * connection per namespace (FitqClient.followLog, as `fitq logs -f` uses
 * it, takes a connection per follower: 500 open pages were 500 clients of
 * Redis). One reader blocks on the log streams of every followed run at
 * once, and on the namespace's event stream, where a run's start, end,
 * re-staging and removal show even when its log is packed as it ends
 * (model/logs.ts). A page that joins interrupts the blocked read (CLIENT UNBLOCK)
 * so its run is read at once. Every followed run is also looked at every
 * few seconds, and again as a worker's lease runs out: a run whose worker
 * died reads as the reaper will leave it (model/upkeep-view.ts), as
 * followLog reads it. It only reads.
 *
 * Each run is read from one position, never after any of its followers'
 * (a page joining with an earlier one moves it back; the others skip what
 * they have), so every follower gets every entry after its own, in order,
 * once.
 */
import type { RedisConnection } from '../redis/connection.js';
import { RunRemovedError, type FitqClient } from '../client.js';
import { connectRedis, type ConnectionOptions } from '../redis/connection.js';
import { closeRedis } from '../redis/open-connections.js';
import { isAfter, parseLogEntry, type LogEntry } from '../model/logs.js';
import { lastEventId, readLogEntries } from '../operations/log-reads.js';
import { isEnded, type RunRecord } from '../model/run-record.js';

/** What a follower hears: entries after its position, then the run's end or why it cannot be followed (once). */
export interface LogSink {
  entry(entry: LogEntry): void;
  end(run: RunRecord): void;
  failed(error: Error): void;
}

/** Entries read per XREAD, and per page of an ended run's rest. */
const COUNT = 1000;
/** Longest blocked read: bounds how late a page that joined just as a read began hears its first new line. */
const BLOCK_MS = 1000;
/** How often every followed run is looked at, whatever the events said. */
const CHECK_MS = 2000;
/** Longest and shortest wait between two looks at the workers' leases while runs are followed. */
const MAX_LAPSE_MS = 30_000;
const MIN_LAPSE_MS = 100;
/** Past the lease deadline, so the read finds it lapsed. */
const LAPSE_MARGIN_MS = 5;
/** After a failed read (RedisConnection away), before reading again. */
const RETRY_MS = 1000;

interface Follower {
  sink: LogSink;
  /** The last entry it has. */
  after: string;
}

interface FollowedRun {
  /** Where the next read of its log begins: at or before every follower's position. */
  after: string;
  followers: Set<Follower>;
}

/** One namespace's reader of followed logs; its connection opens with the first follower. */
export class NamespaceLogReader {
  private readonly runs = new Map<string, FollowedRun>();
  /** Runs to look at before the next read (an event of theirs, an end marker, a new follower). */
  private readonly due = new Set<string>();
  private redis: Promise<RedisConnection> | undefined;
  private readerId: number | undefined;
  private reading = false;
  private closed = false;

  constructor(
    private readonly client: FitqClient,
    private readonly connection: ConnectionOptions,
  ) {}

  /** Runs followed now (by at least one page). */
  get followedRuns(): number {
    return this.runs.size;
  }

  /**
   * Follows run `runId`'s output after entry `after` ("0": from the start)
   * until it ends; returns the way to stop. An unknown run is refused at once
   * (getRun's UsageError); an ended one gets its rest and its end at once.
   */
  async follow(runId: string, after: string, sink: LogSink): Promise<() => void> {
    const run = await this.client.getRun(runId);
    const follower: Follower = { sink, after };
    if (isEnded(run)) {
      await this.finish(run, [follower]);
      return () => {};
    }
    let followed = this.runs.get(runId);
    if (!followed) {
      followed = { after, followers: new Set() };
      this.runs.set(runId, followed);
    } else if (isAfter(followed.after, after)) {
      followed.after = after;
    }
    followed.followers.add(follower);
    // Looked at once it is read: it may have ended between getRun and now.
    this.due.add(runId);
    this.start();
    void this.interrupt();
    const joined = followed;
    return () => {
      joined.followers.delete(follower);
      if (joined.followers.size === 0 && this.runs.get(runId) === joined) this.runs.delete(runId);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const redis = await this.redis?.catch(() => undefined);
    // A blocked XREAD would hold QUIT back until it times out: disconnect at once.
    if (redis) {
      redis.disconnect();
      await closeRedis(redis);
    }
  }

  private connect(): Promise<RedisConnection> {
    if (this.redis) return this.redis;
    this.redis = (async () => {
      const redis = await connectRedis({ ...this.connection, evictionCheck: undefined }, true);
      const learnId = () =>
        void redis.client('ID').then(
          (id) => (this.readerId = Number(id)),
          () => (this.readerId = undefined), // not allowed: reads end within BLOCK_MS anyway
        );
      learnId();
      // Back from a break: a new connection id, and anything may have happened meanwhile.
      redis.on('ready', () => {
        learnId();
        for (const runId of this.runs.keys()) this.due.add(runId);
      });
      return redis;
    })();
    // A first connect that failed is tried again by the next follower.
    this.redis.catch(() => {
      this.redis = undefined;
    });
    return this.redis;
  }

  /** Ends a blocked read, so the next one reads what is followed now. */
  private async interrupt(): Promise<void> {
    if (this.readerId !== undefined) await this.client.redis.client('UNBLOCK', this.readerId).catch(() => {});
  }

  /** Starts the read loop unless it runs; it stops once nothing is followed. */
  private start(): void {
    if (this.reading || this.closed) return;
    this.reading = true;
    void this.read().finally(() => {
      this.reading = false;
      // A follower that joined as the loop was stopping.
      if (this.runs.size > 0 && !this.closed) this.start();
    });
  }

  private async read(): Promise<void> {
    let redis: RedisConnection;
    try {
      redis = await this.connect();
    } catch (error) {
      this.failAll(error as Error);
      return;
    }
    const { keys } = this.client;
    const eventsKey = keys.queue.key('events');
    let eventsAfter: string | undefined;
    let checkAt = 0;
    let lapseAt = 0;
    while (!this.closed && this.runs.size > 0) {
      try {
        // Taken before the runs are first looked at: any later event of theirs is after it.
        eventsAfter ??= await lastEventId({ redis, keys });
        const now = performance.now();
        if (now >= lapseAt) {
          lapseAt = performance.now() + (await this.msUntilLapse());
          // A lease may have run out: every run is looked at (its worker's run reads as the reaper will leave it).
          checkAt = now;
        }
        if (now >= checkAt || this.due.size > 0) {
          const ids = now >= checkAt ? [...this.runs.keys()] : [...this.due];
          if (now >= checkAt) checkAt = now + CHECK_MS;
          this.due.clear();
          await this.check(ids);
          continue;
        }
        const followed = [...this.runs];
        const from = followed.map(([, run]) => run.after);
        const byKey = new Map(followed.map(([runId, run], i) => [keys.runLog(runId), { runId, run, from: from[i]! }]));
        // BLOCK 0 would wait forever: at least 1 ms.
        const blockMs = Math.max(1, Math.ceil(Math.min(BLOCK_MS, checkAt - now, lapseAt - now)));
        const reply = await redis.xread('COUNT', COUNT, 'BLOCK', blockMs, 'STREAMS', eventsKey, ...byKey.keys(), eventsAfter, ...from);
        for (const [key, entries] of reply ?? []) {
          if (key === eventsKey) {
            for (const [id, flat] of entries) {
              eventsAfter = id;
              const jobId = flat[flat.indexOf('jobId') + 1];
              if (flat.includes('jobId') && jobId !== undefined && this.runs.has(jobId)) this.due.add(jobId);
            }
            continue;
          }
          const read = byKey.get(key);
          // Stopped following meanwhile, or moved back for a new follower: read again from there.
          if (!read || this.runs.get(read.runId) !== read.run || read.run.after !== read.from) continue;
          for (const [id, flat] of entries) {
            const entry = parseLogEntry(id, flat);
            read.run.after = id;
            for (const follower of read.run.followers) deliver(follower, entry);
            // An attempt ended (the run, unless BullMQ retries it); staged again: look at once.
            if (entry.kind === 'end' || entry.kind === 'restaged') this.due.add(read.runId);
          }
        }
      } catch {
        if (this.closed) return;
        // Redis away: the connection reconnects by itself (and marks every run to look at); read on from the same place.
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        checkAt = 0;
      }
    }
  }

  /** Ms until the next lease of a live worker runs out. */
  private async msUntilLapse(): Promise<number> {
    const workers = await this.client.listWorkers();
    const next = Math.min(MAX_LAPSE_MS, ...workers.map((worker) => worker.liveness.leaseLeftMs + LAPSE_MARGIN_MS));
    return Math.max(next, MIN_LAPSE_MS);
  }

  /** Ends the following of those of `ids` that ended or are gone. */
  private async check(ids: readonly string[]): Promise<void> {
    const runs = new Map((await this.client.readRuns(ids)).map((run) => [run.id, run]));
    for (const runId of ids) {
      const followed = this.runs.get(runId);
      if (!followed) continue;
      const run = runs.get(runId);
      if (run !== undefined && !isEnded(run)) continue;
      this.runs.delete(runId);
      const followers = [...followed.followers];
      if (run === undefined) followers.forEach((follower) => follower.sink.failed(new RunRemovedError(runId)));
      else await this.finish(run, followers);
    }
  }

  /** Gives each follower of an ended run the rest of its output (its packed log too), then the end. */
  private async finish(run: RunRecord, followers: readonly Follower[]): Promise<void> {
    try {
      let after = followers.reduce((earliest, follower) => (isAfter(earliest, follower.after) ? follower.after : earliest), followers[0]?.after ?? '0');
      for (let page = await readLogEntries(this.client, run.id, after); page.length > 0; ) {
        for (const entry of page) for (const follower of followers) deliver(follower, entry);
        after = page[page.length - 1]!.id;
        page = await readLogEntries(this.client, run.id, after);
      }
    } catch (error) {
      followers.forEach((follower) => follower.sink.failed(error as Error));
      return;
    }
    followers.forEach((follower) => follower.sink.end(run));
  }

  private failAll(error: Error): void {
    const followers = [...this.runs.values()].flatMap((run) => [...run.followers]);
    this.runs.clear();
    followers.forEach((follower) => follower.sink.failed(error));
  }
}

/** An entry to a follower that does not have it yet. */
function deliver(follower: Follower, entry: LogEntry): void {
  if (!isAfter(entry.id, follower.after)) return;
  follower.after = entry.id;
  follower.sink.entry(entry);
}
