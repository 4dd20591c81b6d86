/**
 * The terminal `fitq top` draws on: the alternate screen (what the
 * terminal showed comes back on quitting), the cursor hidden, each frame
 * drawn over the last from the top-left corner, keys read one at a time
 * (raw mode), and the terminal's size, read again when it changes.
 */
import { emitKeypressEvents } from 'node:readline';
import type { ReadStream, WriteStream } from 'node:tty';
import stringWidth from 'string-width';
import type { FrameSize } from './render.js';

const ALTERNATE_SCREEN = '\x1b[?1049h';
const MAIN_SCREEN = '\x1b[?1049l';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const HOME = '\x1b[H';
const CLEAR_LINE_END = '\x1b[K';
const CLEAR_SCREEN_END = '\x1b[J';

export interface Key {
  name?: string;
  ctrl?: boolean;
}

export class TerminalScreen {
  private onKey: ((text: string | undefined, key: Key | undefined) => void) | undefined;
  private onResize: (() => void) | undefined;

  constructor(
    private readonly input: ReadStream,
    private readonly output: WriteStream,
  ) {}

  /** Takes the terminal: keys go to onKey, resizes to onResize. */
  open(onKey: (text: string | undefined, key: Key | undefined) => void, onResize: () => void): void {
    this.onKey = onKey;
    this.onResize = onResize;
    emitKeypressEvents(this.input);
    this.input.setRawMode(true);
    this.input.on('keypress', onKey);
    this.input.resume();
    this.output.on('resize', onResize);
    this.output.write(ALTERNATE_SCREEN + HIDE_CURSOR);
  }

  size(): FrameSize {
    return { columns: this.output.columns || 80, rows: this.output.rows || 24 };
  }

  /** Draws a frame over the last; lines are at most as wide as the terminal. */
  draw(lines: readonly string[]): void {
    const { columns } = this.size();
    // A line as wide as the terminal leaves the cursor on its last column, where clearing to the end would erase that column.
    const body = lines.map((line) => (stringWidth(line) < columns ? line + CLEAR_LINE_END : line)).join('\r\n');
    this.output.write(HOME + body + CLEAR_SCREEN_END);
  }

  /** Gives the terminal back as it was. */
  close(): void {
    if (this.onKey) this.input.off('keypress', this.onKey);
    if (this.onResize) this.output.off('resize', this.onResize);
    if (this.input.isTTY) this.input.setRawMode(false);
    this.input.pause();
    this.output.write(SHOW_CURSOR + MAIN_SCREEN);
  }
}

/** Whether a key quits: q, or Ctrl-C (raw mode makes it a key, not a signal). */
export function quits(text: string | undefined, key: Key | undefined): boolean {
  return text === 'q' || text === 'Q' || (key?.ctrl === true && key.name === 'c');
}
