/**
 * Splits a byte stream into lines with bounded memory: bytes that are not
 * UTF-8 become U+FFFD, and a line longer than maxLineChars is cut into pieces.
 */
import { StringDecoder } from 'node:string_decoder';

export const MAX_LINE_CHARS = 16 * 1024;

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly maxLineChars = MAX_LINE_CHARS) {}

  /** Lines completed by this chunk. */
  push(chunk: Buffer): string[] {
    return this.split(this.pending + this.decoder.write(chunk), false);
  }

  /** The last, unterminated line, if any. */
  end(): string[] {
    return this.split(this.pending + this.decoder.end(), true);
  }

  private split(text: string, final: boolean): string[] {
    const lines = text.split('\n');
    this.pending = final ? '' : (lines.pop() ?? '');
    if (final && lines[lines.length - 1] === '') lines.pop();
    const out: string[] = [];
    for (const line of lines) this.cut(line.endsWith('\r') ? line.slice(0, -1) : line, out);
    while (this.pending.length > this.maxLineChars) {
      out.push(this.pending.slice(0, this.maxLineChars));
      this.pending = this.pending.slice(this.maxLineChars);
    }
    return out;
  }

  private cut(line: string, out: string[]): void {
    for (let start = 0; start < line.length || start === 0; start += this.maxLineChars) {
      out.push(line.slice(start, start + this.maxLineChars));
      if (line.length === 0) break;
    }
  }
}
