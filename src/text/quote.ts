/**
 * Values as messages show them: in single quotes, on one line, control and
 * bidirectional characters escaped, cut when long; bytes that are not UTF-8
 * as \xNN. Every error that names what a user typed, or what Redis holds,
 * quotes it through here.
 */
import { utf8Pieces } from './utf8.js';

/** Values longer than this are shown cut, with their length. */
const MAX_QUOTED_LENGTH = 200;

/**
 * A value as error messages show it: in single quotes, on one line (control
 * characters escaped, like \n, \x1b or \u202e), and cut after 200 characters.
 */
export function quote(value: string): string {
  let shown = value;
  let suffix = '';
  if (value.length > MAX_QUOTED_LENGTH) {
    // Never cut a surrogate pair in two.
    const end = /[\uD800-\uDBFF]/.test(value.charAt(MAX_QUOTED_LENGTH - 1)) ? MAX_QUOTED_LENGTH - 1 : MAX_QUOTED_LENGTH;
    shown = `${value.slice(0, end)}…`;
    suffix = ` (${value.length} characters)`;
  }
  return `'${oneLine(shown)}'${suffix}`;
}

/**
 * Bytes as error messages show them: like quote(), with each byte that is not
 * part of UTF-8 as \xNN (`'caf\xe9.txt'`).
 */
export function quoteBytes(bytes: Uint8Array): string {
  let shown = '';
  for (const piece of utf8Pieces(bytes)) {
    // Cut between pieces, never inside an escape.
    if (shown.length >= MAX_QUOTED_LENGTH) return `'${shown}…' (${bytes.length} bytes)`;
    shown += typeof piece === 'number' ? escapeByte(piece) : escapeChar(piece);
  }
  return `'${shown}'`;
}

const escapeByte = (byte: number): string => `\\x${byte.toString(16).padStart(2, '0')}`;

/**
 * The value with control characters escaped (\n, \x1b, \u202e...), so it
 * prints on one line, cannot drive a terminal and cannot reorder the text
 * around it.
 */
export function oneLine(value: string): string {
  return Array.from(value, escapeChar).join('');
}

/**
 * Control characters (C0, DEL, C1) and the Unicode line separators would
 * break the line; the bidirectional controls (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069) would make it display in another order than
 * it reads, e.g. a command shown reversed after U+202E.
 */
function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function escapeChar(char: string): string {
  // A lone surrogate (Array.from keeps a pair in one string) would print as U+FFFD.
  const lone = char.length === 1 && char.charCodeAt(0) >= 0xd800 && char.charCodeAt(0) <= 0xdfff;
  if (!lone && !isUnsafe(char.charCodeAt(0))) return char;
  switch (char) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    default: {
      const code = char.charCodeAt(0);
      return code <= 0xff ? escapeByte(code) : `\\u${code.toString(16).padStart(4, '0')}`;
    }
  }
}
