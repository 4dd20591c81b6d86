/**
 * The files a run's output is also written to (`fitq stage --output/--error`,
 * see queue/output-files.ts): opened by the worker just before the run
 * starts (truncated, or appended to), written with the run's output as it
 * comes, closed once it has been read to the end. Runs without output
 * files never come here.
 *
 * Opening never blocks the worker: files are opened off its event loop and
 * non-blocking, so a named pipe with no reader is refused at once instead
 * of waiting for one, and only a regular file (or /dev/null) is taken: a
 * pipe, socket, terminal or device could stall the run's output, or the
 * worker, for as long as nobody reads it.
 */
import { constants, type WriteStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { StoredOutputFiles } from '../model/output-files.js';
import { oneLine } from '../text/quote.js';
import { shortageOf } from './shortage.js';

export interface OutputFileWriters {
  stdout: WriteStream;
  /** The same stream as stdout when stderr has no file of its own. */
  stderr: WriteStream;
  /** Ends the writes; resolves once the files are closed. */
  close(): Promise<void>;
}

/** Why a file could not be opened: the run's failure, or (`shortage`) the worker's, which puts the run back. */
export type OutputFilesFailure = { failure: string; shortage?: boolean };

function describeOpenError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such directory';
    case 'EACCES':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENXIO':
      return 'it is a named pipe (FIFO) with no reader: give a regular file';
    default:
      return error.message;
  }
}

/** What a file that is not regular is, for the reason a run fails. */
function describeKind(file: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (file.isFIFO()) return 'a named pipe (FIFO)';
  if (file.isSocket()) return 'a socket';
  if (file.isCharacterDevice()) return 'a character device (a terminal?)';
  if (file.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** /dev/null's device number, to take it where only regular files are taken (read once). */
let devNull: Promise<number | undefined> | undefined;

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

/** Opens the files, or says why one cannot be opened (the run then ends failed with that reason, or is put back). */
export async function openOutputFiles(files: StoredOutputFiles): Promise<OutputFileWriters | OutputFilesFailure> {
  // Non-blocking (a FIFO with no reader is ENXIO at once), and a terminal never becomes the worker's.
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOCTTY | (files.append ? constants.O_APPEND : constants.O_TRUNC);
  const handles: FileHandle[] = [];
  const open1 = async (flag: string, path: string): Promise<FileHandle | OutputFilesFailure> => {
    const failed = (why: string) => ({ failure: `cannot open ${flag} file ${oneLine(path)}: ${why}` });
    let handle: FileHandle;
    try {
      handle = await open(path, flags, 0o666);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      const shortage = shortageOf(code, `opening ${flag} file ${oneLine(path)}: ${code}`);
      return shortage ? { failure: shortage, shortage: true } : failed(describeOpenError(error as NodeJS.ErrnoException));
    }
    handles.push(handle);
    const file = await handle.stat().catch((error: unknown) => error as Error);
    if (file instanceof Error) return failed(file.message);
    if (file.isFile()) return handle;
    devNull ??= stat('/dev/null').then((nul) => nul.rdev, () => undefined);
    if (file.isCharacterDevice() && file.rdev === (await devNull)) return handle;
    return failed(`it is ${describeKind(file)}: give a regular file`);
  };
  const out = await open1('--output', files.stdout);
  const err = 'failure' in out || files.stderr === undefined || files.stderr === files.stdout ? out : await open1('--error', files.stderr);
  if ('failure' in out || 'failure' in err) {
    await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
    return 'failure' in out ? out : (err as OutputFilesFailure);
  }
  const stdout = out.createWriteStream();
  const stderr = err === out ? stdout : err.createWriteStream();
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
