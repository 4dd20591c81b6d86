/**
 * Keeps a page someone else wrote (Bull Board's) to the dashboard's own
 * origin: its HTML loses every stylesheet, script or icon link to another
 * origin (Bull Board's asks Google for its fonts; the CSS falls back to the
 * system's), and a Content-Security-Policy stops the browser fetching from
 * anywhere else should a script try at run time.
 */
import type { MiddlewareHandler } from 'hono';

/** Same origin only; inline styles (React's `style` attributes), data: and blob: images, fonts and workers. */
export const SAME_ORIGIN_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** A `<link>` or `<script>` tag whose href or src names another origin (`https://…`, `//…`), with its closing tag. */
const EXTERNAL_TAG = /<(link|script)\b[^>]*?\s(?:href|src)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\/[^>]*>(?:\s*<\/script>)?[ \t]*\n?/gi;

/** The HTML without tags that load from another origin. */
export function withoutExternalAssets(html: string): string {
  return html.replace(EXTERNAL_TAG, '');
}

/** Middleware: HTML responses lose their external assets and carry SAME_ORIGIN_POLICY. */
export function offlinePages(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!/^text\/html\b/i.test(c.res.headers.get('content-type') ?? '')) return;
    const html = await c.res.text();
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    headers.set('content-security-policy', SAME_ORIGIN_POLICY);
    const status = c.res.status;
    c.res = undefined; // else hono copies the old headers (its content-length) onto the new response
    c.res = new Response(withoutExternalAssets(html), { status, headers });
  };
}
