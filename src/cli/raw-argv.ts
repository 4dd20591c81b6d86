/**
 * The words typed on the command line that are not UTF-8. Node decodes argv
 * as UTF-8, replacing what is not by U+FFFD, so `caf\xe9.txt` reaches fitq
 * as `caf�.txt`; and Node can only pass UTF-8 on to a process. fitq cannot
 * keep such bytes, so it refuses them rather than run another name. The bytes
 * as typed are read back from /proc/self/cmdline (Linux); where that is not
 * possible, a word holding U+FFFD is refused, as it may stand for such bytes.
 */
import { readFileSync } from 'node:fs';
import { decodeUtf8, REPLACEMENT_CHARACTER } from '../text/utf8.js';

/** A typed word that is not UTF-8: its index among the words, and its bytes when they could be read. */
export interface NonUtf8Word {
  index: number;
  bytes: Buffer | undefined;
}

/**
 * The first word of `typed` (process.argv after node and the script) that
 * was not UTF-8 as typed. Linear; /proc is read only when a word holds U+FFFD.
 */
export function findNonUtf8Word(typed: readonly string[]): NonUtf8Word | undefined {
  const suspects = typed.flatMap((word, index) => (word.includes(REPLACEMENT_CHARACTER) ? [index] : []));
  if (suspects.length === 0) return undefined;
  const raw = rawWords(typed);
  for (const index of suspects) {
    const bytes = raw?.[index];
    // Without the bytes, U+FFFD may have been typed or may replace bytes: refuse.
    if (bytes === undefined || decodeUtf8(bytes) === undefined) return { index, bytes };
  }
  return undefined;
}

/**
 * The last typed.length words of this process's command line as bytes, if
 * /proc/self/cmdline can be read and agrees with what Node decoded.
 */
function rawWords(typed: readonly string[]): Buffer[] | undefined {
  let cmdline: Buffer;
  try {
    cmdline = readFileSync('/proc/self/cmdline');
  } catch {
    return undefined;
  }
  const words: Buffer[] = [];
  // Every word ends with a NUL.
  for (let start = 0; start < cmdline.length; ) {
    let end = cmdline.indexOf(0, start);
    if (end < 0) end = cmdline.length;
    words.push(cmdline.subarray(start, end));
    start = end + 1;
  }
  if (words.length < typed.length) return undefined;
  const tail = words.slice(words.length - typed.length);
  return tail.every((bytes, i) => bytes.toString('utf8') === typed[i]) ? tail : undefined;
}
