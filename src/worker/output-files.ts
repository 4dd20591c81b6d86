/**
 * The files a run's output is also written to (`fitq stage --output/--error`,
 * see queue/output-files.ts): opened by the worker just before the run
 * starts (truncated, or appended to), written with the run's output as it
 * comes, closed once it has been read to the end. Runs without output
 * files never come here.
 */
import { closeSync, createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { StoredOutputFiles } from '../queue/output-files.js';
import { oneLine } from '../queue/names.js';

export interface OutputFileWriters {
  stdout: WriteStream;
  /** The same stream as stdout when stderr has no file of its own. */
  stderr: WriteStream;
  /** Ends the writes; resolves once the files are closed. */
  close(): Promise<void>;
}

function describeOpenError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such directory';
    case 'EACCES':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error.message;
  }
}

/** Resolves when a file's stream takes more (or can take nothing more: it failed or was closed). */
export function drained(stream: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done).off('error', done).off('close', done);
      resolve();
    };
    stream.once('drain', done).once('error', done).once('close', done);
  });
}

/** Opens the files, or says why one cannot be opened (the run then ends failed with that reason). */
export function openOutputFiles(files: StoredOutputFiles): OutputFileWriters | { failure: string } {
  const flags = files.append ? 'a' : 'w';
  const fds: number[] = [];
  const open = (flag: string, path: string): number | string => {
    try {
      const fd = openSync(path, flags, 0o666);
      fds.push(fd);
      return fd;
    } catch (error) {
      return `cannot open ${flag} file ${oneLine(path)}: ${describeOpenError(error as NodeJS.ErrnoException)}`;
    }
  };
  const out = open('--output', files.stdout);
  const err = files.stderr === undefined || files.stderr === files.stdout ? out : open('--error', files.stderr);
  if (typeof out === 'string' || typeof err === 'string') {
    for (const fd of fds) closeSync(fd);
    return { failure: typeof out === 'string' ? out : (err as string) };
  }
  const stdout = createWriteStream('', { fd: out });
  const stderr = err === out ? stdout : createWriteStream('', { fd: err });
  const streams = stderr === stdout ? [stdout] : [stdout, stderr];
  // A write that fails (disk full) must not crash the worker: the run's stored log still has it.
  for (const stream of streams) stream.on('error', () => {});
  return {
    stdout,
    stderr,
    close: () =>
      Promise.all(streams.map((stream) => new Promise<void>((resolve) => {
        if (stream.destroyed) resolve();
        else stream.end(() => resolve());
        stream.once('error', () => resolve());
      }))).then(() => {}),
  };
}
