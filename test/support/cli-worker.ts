/**
 * `fitq worker --log-format json` as a real process, with its log parsed as
 * it comes; whatever a test leaves running is killed after it.
 */
import { execa, type ResultPromise } from 'execa';
import { afterEach } from 'vitest';
import { BIN, messages, parseJsonLog, redisUrl } from './fitq.js';
import { printWorkerLog } from './failure-logs.js';
import { waitFor } from './wait.js';

export interface CliWorker {
  readonly process: ResultPromise;
  readonly pid: number;
  /** Everything the worker printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Its JSON log lines so far (run output included). */
  logs(): Record<string, unknown>[];
  /** Messages of its JSON log lines so far (not run output). */
  messages(): string[];
  waitForMessage(message: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<{ exitCode: number | undefined; signal: string | undefined }>;
}

const cliWorkers: CliWorker[] = [];

/** Starts `fitq worker ARGS --log-format json` against the test Redis (or `url`), with `env` added to its environment. */
export function spawnCliWorker(queue: string, args: string[], url = redisUrl(), env: Record<string, string> = {}): CliWorker {
  const subprocess = execa('node', [BIN, 'worker', ...args, '--log-format', 'json'], {
    env: { FITQ_REDIS_URL: url, FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '', ...env },
    stdin: 'ignore',
    buffer: false,
    reject: false,
  });
  const spawnedAt = performance.now();
  let stdout = '';
  let stderr = '';
  subprocess.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  subprocess.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const worker: CliWorker = {
    process: subprocess,
    pid: subprocess.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    logs: () => parseJsonLog(stdout),
    messages: () => messages(parseJsonLog(stdout)),
    async waitForMessage(message, timeoutMs = 30_000) {
      const matches = (line: string) => (typeof message === 'string' ? line === message : message.test(line));
      try {
        await waitFor(`worker log "${String(message)}"`, () => worker.messages().some(matches), timeoutMs);
      } catch (error) {
        const state = subprocess.exitCode === null && subprocess.signalCode === null ? 'still running' : `exited (${subprocess.exitCode ?? subprocess.signalCode})`;
        const age = ((performance.now() - spawnedAt) / 1000).toFixed(1);
        throw new Error(`${(error as Error).message}; the worker, started ${age}s ago, is ${state} (stdout so far:\n${stdout}\nstderr:\n${stderr})`);
      }
    },
    exited: subprocess.then((result) => ({ exitCode: result.exitCode, signal: result.signal })),
  };
  cliWorkers.push(worker);
  return worker;
}

afterEach(async (context) => {
  for (const worker of cliWorkers.splice(0)) {
    // What it said on stderr too (a worker that never logged said why there, if anywhere).
    const stderr = worker.stderr().trim().slice(-2000);
    const state = worker.process.exitCode === null && worker.process.signalCode === null ? 'running' : `exited (${worker.process.exitCode ?? worker.process.signalCode})`;
    printWorkerLog(context, `CLI worker pid ${worker.pid}, ${state}${stderr ? `, stderr: ${stderr}` : ''}`, worker.logs());
    if (worker.process.exitCode === null && worker.process.signalCode === null) worker.process.kill('SIGKILL');
    await worker.exited;
  }
});
