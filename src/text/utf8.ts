/**
 * Text that is not UTF-8. Commands, paths, labels and environment values are
 * stored as JSON text and handed to processes through Node, which encodes
 * every string as UTF-8: bytes that are not UTF-8, or a string holding a lone
 * UTF-16 surrogate, would come out as U+FFFD, i.e. as something else than was
 * given. fitq refuses them instead; this says where they are and shows them.
 */

/** A UTF-16 surrogate not paired with its other half (in `u` mode a pair is one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** The character Node puts where the bytes it decodes are not UTF-8. */
export const REPLACEMENT_CHARACTER = '\uFFFD';

const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Whether a string is text that survives being encoded as UTF-8. */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** The bytes as a string when they are UTF-8, else undefined. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The bytes in order, as characters where they are UTF-8 and as single byte
 * values (numbers) where they are not.
 */
export function* utf8Pieces(bytes: Uint8Array): Generator<string | number> {
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length === 0) {
      yield bytes[i]!;
      i += 1;
    } else {
      yield Buffer.from(bytes.subarray(i, i + length)).toString('utf8');
      i += length;
    }
  }
}

/**
 * The length of the well-formed UTF-8 sequence starting at `start` (Unicode's
 * table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or 0.
 */
function sequenceLength(bytes: Uint8Array, start: number): number {
  const lead = bytes[start]!;
  if (lead < 0x80) return 1;
  const [length, low, high] =
    lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf]
    : lead === 0xe0 ? [3, 0xa0, 0xbf]
    : lead === 0xed ? [3, 0x80, 0x9f]
    : lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf]
    : lead === 0xf0 ? [4, 0x90, 0xbf]
    : lead === 0xf4 ? [4, 0x80, 0x8f]
    : lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf]
    : [0, 0, 0];
  if (length === 0 || start + length > bytes.length) return 0;
  const second = bytes[start + 1]!;
  if (second < low || second > high) return 0;
  for (let i = start + 2; i < start + length; i++) if (bytes[i]! < 0x80 || bytes[i]! > 0xbf) return 0;
  return length;
}
