/**
 * Reads a run's stdout and stderr as they come: split into lines (at most
 * 16,384 characters, see LineSplitter), copied to its output files if it
 * has some, and read no faster than the worker can store them (see
 * waitForOutputRoom) nor than its files take them, so the worker's memory
 * stays bounded: reading pauses, and the run blocks writing as on a full
 * pipe, until there is room again.
 */
import type { Readable } from 'node:stream';
import { LineSplitter } from './line-splitter.js';
import { drained, type OutputFileWriters } from './output-files.js';
import { waitForOutputRoom } from './output.js';

/**
 * Reads `readables` (stdout, stderr) to their end, giving each line to
 * `onLine`, the last one when its pipe closes; once the process has
 * `exited`, what is left in a pipe is read at once.
 */
export function readRunPipes(
  readables: readonly (Readable | null)[],
  files: OutputFileWriters | undefined,
  onLine: (stream: 'stdout' | 'stderr', line: string) => void,
  exited: () => boolean,
): void {
  for (const [index, stream] of (['stdout', 'stderr'] as const).entries()) {
    const splitter = new LineSplitter();
    const readable = readables[index];
    const copy = files?.[stream];
    // Reading pauses while anything waits: room to store output, or an output file to take more.
    let waits = 0;
    const pauseUntil = (ready: Promise<void>) => {
      if (waits++ === 0) readable?.pause();
      void ready.then(() => {
        if (--waits === 0) readable?.resume();
      });
    };
    readable?.on('data', (chunk: Buffer) => {
      splitter.push(chunk).forEach((line) => onLine(stream, line));
      // Too much output waiting to be stored: stop reading (the run blocks
      // writing, as on a full pipe) until there is room again. Once the
      // process has exited, what is left in the pipe is read at once.
      const room = exited() ? undefined : waitForOutputRoom();
      if (room) pauseUntil(room);
      if (copy && !copy.write(chunk) && !exited()) pauseUntil(drained(copy));
    });
    // 'close' follows 'end', and comes alone when the pipe is destroyed: the last line either way.
    readable?.once('close', () => splitter.end().forEach((line) => onLine(stream, line)));
  }
}
