/**
 * Reads a run's stdout and stderr as the spawn helper forwards them (see
 * spawner/spawner.ts): split into lines (at most 16,384 characters, see
 * LineSplitter), copied to its output files if it has some, and read no
 * faster than the worker can store them (see waitForOutputRoom) nor than
 * its files take them, so the worker's memory stays bounded: the helper is
 * told to pause reading, and the run blocks writing as on a full pipe,
 * until there is room again.
 */
import { LineSplitter } from './line-splitter.js';
import { drained, type OutputFileWriters } from './output-files.js';
import { waitForOutputRoom } from './output.js';

const STREAMS = ['stdout', 'stderr'] as const;

/** Pauses and resumes reading a stream of the run (0: stdout, 1: stderr). */
export interface PipeFlow {
  pause(stream: 0 | 1): void;
  resume(stream: 0 | 1): void;
}

export class RunPipes {
  private readonly splitters = [new LineSplitter(), new LineSplitter()];
  /** What reading each stream waits for (room to store output, an output file to take more). */
  private readonly waits = [0, 0];
  private closed = false;

  constructor(
    private readonly files: OutputFileWriters | undefined,
    private readonly onLine: (stream: 'stdout' | 'stderr', line: string) => void,
    /** Once the process has exited, what is left in a pipe is read at once. */
    private readonly exited: () => boolean,
    private readonly flow: PipeFlow,
  ) {}

  /** A chunk read from stream `index`. */
  data(index: 0 | 1, chunk: Buffer): void {
    if (this.closed) return;
    const stream = STREAMS[index];
    this.splitters[index]!.push(chunk).forEach((line) => this.onLine(stream, line));
    // Too much output waiting to be stored: stop reading (the run blocks
    // writing, as on a full pipe) until there is room again.
    const room = this.exited() ? undefined : waitForOutputRoom();
    if (room) this.pauseUntil(index, room);
    const copy = this.files?.[stream];
    if (copy && !copy.write(chunk) && !this.exited()) this.pauseUntil(index, drained(copy));
  }

  /** Both pipes are closed: the last, unterminated lines. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const index of [0, 1] as const) this.splitters[index]!.end().forEach((line) => this.onLine(STREAMS[index], line));
  }

  private pauseUntil(index: 0 | 1, ready: Promise<void>): void {
    if (this.waits[index]!++ === 0) this.flow.pause(index);
    void ready.then(() => {
      if (--this.waits[index]! === 0) this.flow.resume(index);
    });
  }
}
