/** Ports typed on the command line (`--port 7070`, `--metrics-port 9464`). */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

export const HIGHEST_PORT = 65_535;

/** A port typed on the command line (`--port 7070`, `--metrics-port 9464`): digits, 0 to 65535. */
export function parsePort(flag: string, text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port <= HIGHEST_PORT)) throw new UsageError(`expected ${flag} to be a port number from 0 to ${HIGHEST_PORT}, got ${quote(text)}`);
  return port;
}
