/**
 * A page of its own, without the dashboard's header or assets: what a
 * request that is refused before it may see the dashboard gets (no token,
 * a host the dashboard does not answer to, too many streams).
 */
import { html } from 'hono/html';
import type { Html } from './layout.js';

/** The whole page: `heading` (its test id `testid`) and `body`'s paragraphs. */
export function plainPage(title: string, testid: string, heading: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>fitq dashboard: ${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:32rem;padding:0 1rem;color:#1f2933}code{background:#eef1f5;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1 data-testid="${testid}">${heading}</h1>${body}</body></html>`;
}
