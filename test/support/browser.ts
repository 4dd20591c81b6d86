/**
 * Real headless Chromium for tests: Debian's `chromium` (apt-get install
 * chromium; .ci/run installs it), found on PATH and driven by
 * playwright-core, never a downloaded browser; without it a test fails, it
 * does not skip. One browser per test file, launched at first use and
 * closed after the file; pages reach only the origin under test, and their
 * requests and console errors are recorded. Also: the real `fitq dashboard` process on
 * a free port.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach } from 'vitest';
import { BIN, cliEnv } from './fitq.js';

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));

/** Debian's chromium, found on PATH (as `which chromium` finds it). */
export function chromiumExecutable(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'chromium');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`chromium is not installed (not on PATH): this test drives Debian's chromium, apt-get install chromium (.ci/run installs it)`);
}

let browser: Promise<Browser> | undefined;
const contexts: BrowserContext[] = [];

/** The file's browser, launched once. */
export function sharedBrowser(): Promise<Browser> {
  browser ??= chromium.launch({ executablePath: chromiumExecutable() });
  return browser;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

afterAll(async () => {
  const launched = browser;
  browser = undefined;
  await (await launched?.catch(() => undefined))?.close();
});

export interface BrowserPage {
  page: Page;
  /** Console errors and uncaught page errors, as they came. */
  consoleErrors: string[];
  /** Requests to anywhere but the origin, refused. */
  blocked: string[];
  /** Every URL the page asked for, in order (the refused ones too). */
  requests: string[];
}

/**
 * A fresh page (its own cookies) in the file's browser that reaches only
 * `origin`: any other request is aborted and recorded.
 */
export async function openBrowserPage(origin: string, options: { viewport?: { width: number; height: number } } = {}): Promise<BrowserPage> {
  const context = await (await sharedBrowser()).newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const consoleErrors: string[] = [];
  const blocked: string[] = [];
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url === origin || url.startsWith(`${origin}/`)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  return { page, consoleErrors, blocked, requests };
}

export const SCREEN_SIZES = [
  { name: '1280x800', width: 1280, height: 800 },
  { name: '390x844', width: 390, height: 844 },
] as const;

/**
 * Saves the page at a desktop and a phone size, as
 * test-output/screenshots/<name>-<size>.png (full page), and returns
 * whether anything is wider than the viewport at each size (a page that
 * reads well at a phone width scrolls only up and down).
 */
export async function saveScreenshots(page: Page, name: string): Promise<Record<string, { overflowX: number }>> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const before = page.viewportSize();
  const result: Record<string, { overflowX: number }> = {};
  for (const size of SCREEN_SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    // In the page (strings: this project's types have no DOM): after the layout settles at the new size.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const overflowX = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    result[size.name] = { overflowX };
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size.name}.png`), fullPage: true });
  }
  if (before) await page.setViewportSize(before);
  return result;
}

export interface Dashboard {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  origin: string;
  child: ResultPromise;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, and waits for it to exit; its exit code. */
  stop(): Promise<number | undefined>;
}

const dashboards: Dashboard[] = [];

afterEach(async () => {
  await Promise.all(dashboards.splice(0).map((dashboard) => dashboard.stop()));
});

/**
 * Starts `fitq dashboard --port 0` (plus `args`) as a real process against
 * the test Redis, with FITQ_QUEUE = `queue`, and waits for the address it
 * prints. Stopped after the test.
 */
export async function startDashboard(queue: string, args: string[] = [], env: Record<string, string> = {}): Promise<Dashboard> {
  const child = execa('node', [BIN, 'dashboard', '--port', '0', ...args], {
    env: cliEnv(queue, env),
    stdin: 'ignore',
    buffer: false,
    reject: false,
  });
  let stdout = '';
  let stderr = '';
  const exited = child.then((result) => result.exitCode);
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /fitq dashboard on (http:\/\/\S+?)\/? /.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then((code) => reject(new Error(`fitq dashboard exited (${code}) before serving: ${stderr}`)));
    setTimeout(() => reject(new Error(`fitq dashboard did not print its address within 20 s: ${stdout} ${stderr}`)), 20_000).unref();
  });
  const dashboard: Dashboard = {
    origin,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
  dashboards.push(dashboard);
  return dashboard;
}
