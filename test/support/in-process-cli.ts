/**
 * `fitq ARGS` run inside the test's own process: the same oclif commands
 * bin/run.js runs (dist/ and oclif's manifest), parsed and handled the same
 * way, with their own arguments, environment, stdin, stdout, stderr and exit
 * code, but without starting Node and loading every module again (about a
 * second a call on a loaded 2-core machine). Tests about the process itself
 * (signals, detaching, bytes that are not UTF-8, a worker) start it for real.
 *
 * What a process owns is per call here: an AsyncLocalStorage holds each
 * call's process.argv, process.env, process.ppid, stdin, what it writes to
 * stdout and stderr (directly or through console), and its exit code, so
 * calls may run at once. Outside a call everything is the test's own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { format } from 'node:util';

/**
 * The oclif the commands use: bin/run.js's, bundled (scripts/cli-bundle.js).
 * Its config cache and error classes are its own, so the commands run and
 * their errors are handled by this copy, not by node_modules' @oclif/core.
 */
const { Config, run, Exit, handle } = (await import(new URL('../../dist/cli-bundle/oclif.js', import.meta.url).href)) as typeof import('@oclif/core') &
  typeof import('@oclif/core/handle');

interface Call {
  readonly argv: string[];
  readonly env: Record<string, string | undefined>;
  readonly stdin: Readable | undefined;
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
}

export interface InProcessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const calls = new AsyncLocalStorage<Call>();
let installed = false;

/** Routes what a process owns to the current call, once per test process. */
function install(): void {
  if (installed) return;
  installed = true;
  perCall('argv', (call) => call.argv);
  perCall('env', (call) => call.env);
  // `@` (cli/last-staged.ts) is per shell, i.e. per parent process: a spawned fitq's parent is this process.
  perCall('ppid', () => process.pid);
  perCall('stdin', (call) => call.stdin);
  for (const [stream, into] of [
    [process.stdout, 'stdout'],
    [process.stderr, 'stderr'],
  ] as const) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const call = calls.getStore();
      if (!call) return write(chunk, ...rest);
      call[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stream.write;
  }
  // oclif's this.log and its error printing go through console, which the test runner replaces with its own.
  const consoleMethods = { log: 'stdout', info: 'stdout', debug: 'stdout', error: 'stderr', warn: 'stderr' } as const;
  for (const [method, into] of Object.entries(consoleMethods)) {
    const name = method as keyof typeof consoleMethods;
    const original = console[name].bind(console);
    console[name] = (...args: unknown[]) => {
      const call = calls.getStore();
      if (!call) return original(...args);
      call[into] += `${format(...args)}\n`;
    };
  }
  // oclif's handle() ends the process with the exit code: in a call it is recorded instead (handle returns after it).
  const exit = Exit.exit.bind(Exit);
  Exit.exit = ((code = 0) => {
    const call = calls.getStore();
    if (!call) return exit(code);
    call.exitCode ??= code;
  }) as typeof Exit.exit;
}

/** Makes process[name] the current call's, and the test's own outside a call. */
function perCall<K extends 'argv' | 'env' | 'ppid' | 'stdin'>(name: K, value: (call: Call) => unknown): void {
  const descriptor = Object.getOwnPropertyDescriptor(process, name)!;
  const own = () => (descriptor.get ? descriptor.get.call(process) : descriptor.value) as unknown;
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: descriptor.enumerable ?? true,
    get: () => {
      const call = calls.getStore();
      const mine = call === undefined ? undefined : value(call);
      return mine ?? own();
    },
    set: (next: unknown) => {
      if (calls.getStore() !== undefined) throw new Error(`a fitq command run in-process set process.${name}`);
      if (descriptor.set) descriptor.set.call(process, next);
      else descriptor.value = next;
    },
  });
}

/** Runs `fitq ARGS` with `env` as its whole environment and `input` as its stdin. */
export async function runFitqInProcess(
  bin: string,
  args: readonly string[],
  options: { env: Record<string, string | undefined>; input?: string; timeoutMs: number },
): Promise<InProcessResult> {
  install();
  // Loaded anew for each call (a few ms): oclif's help changes the Config it was given.
  const config = await Config.load({ root: new URL('../../', import.meta.url).pathname });
  const call: Call = {
    argv: [process.execPath, bin, ...args],
    env: { ...options.env },
    stdin: options.input === undefined ? undefined : Readable.from([Buffer.from(options.input)]),
    stdout: '',
    stderr: '',
    exitCode: undefined,
  };
  // oclif's Command sets process.exitCode when a command fails: the process here is the test's.
  const exitCodeBefore = process.exitCode;
  const done = calls.run(call, async () => {
    try {
      await run([...args], config);
    } catch (error) {
      // The same printing and exit code as bin/run.js (oclif's execute).
      await handle(error as Error);
    } finally {
      process.exitCode = exitCodeBefore;
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`fitq ${args.join(' ')} still running after ${options.timeoutMs} ms (in-process)`)), options.timeoutMs);
  });
  try {
    await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
  // As execa gives a process's output: without its last newline.
  const strip = (text: string) => text.replace(/\r?\n$/, '');
  return { exitCode: call.exitCode ?? 0, stdout: strip(call.stdout), stderr: strip(call.stderr) };
}
