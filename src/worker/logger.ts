/**
 * The worker's logger: one pino root, pretty for people or JSON lines for
 * machines. Messages read like "Run abc123 started"; fields carry the ids
 * and amounts for machines (JSON). Pretty logs are one line per event: the
 * message says it all, fields are not repeated under it (a started run's
 * GPU devices and time limit are added to its line).
 *
 * Lines are written asynchronously: those of one burst (runs start and end
 * together) go in one write rather than one write each, which a busy
 * worker pays for on every run; what is still buffered is written
 * synchronously as the process exits.
 */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { UsageError } from '../errors.js';

export type LogFormat = 'pretty' | 'json';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function createLogger(format: LogFormat, level = process.env.FITQ_LOG_LEVEL || 'info'): Logger {
  if (!LEVELS.includes(level)) {
    throw new UsageError(`expected FITQ_LOG_LEVEL to be one of ${LEVELS.join(', ')}, got '${level}'`);
  }
  if (format === 'json') return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.epochTime }, pino.destination({ dest: 1, sync: false }));
  const stream = pretty({
    sync: false,
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,worker,runId,queue,output',
    hideObject: true,
    messageFormat: '{msg}{if devices} on GPU devices {devices}{end}{if timeLimit} (time limit {timeLimit}){end}',
  });
  return pino({ level, base: undefined }, stream);
}
