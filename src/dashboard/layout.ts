/**
 * The page shell every dashboard page shares: header with navigation, the
 * namespaces shown and whether the page is live, the local stylesheet and
 * the live script. Pages give their body (hono's `html`, which escapes
 * every value put into it).
 */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export const NAV = [
  { id: 'overview', href: '/', label: 'Overview' },
  { id: 'workers', href: '/workers', label: 'Workers' },
  { id: 'pools', href: '/pools', label: 'Pools' },
  { id: 'runs', href: '/runs', label: 'Runs' },
  { id: 'bull', href: '/bull', label: 'Bull Board' },
] as const;

export type NavId = (typeof NAV)[number]['id'];

export interface LayoutOptions {
  title: string;
  /** The nav entry to mark as the current page, if any. */
  active?: NavId | undefined;
  body: Html;
  /** Namespaces shown, for the header. */
  queues?: readonly string[] | undefined;
  /** Marks the dashboard read-only in the header when false. */
  allowActions?: boolean | undefined;
}

export function layout({ title, active, body, queues = [], allowActions }: LayoutOptions): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · fitq</title>
<link rel="stylesheet" href="/assets/style.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<script src="/assets/live.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>fitq</a>
  <nav class="nav" aria-label="Dashboard">
    ${NAV.map((item) => html`<a href="${item.href}" data-testid="nav-${item.id}"${item.id === active ? html` aria-current="page"` : ''}>${item.label}</a>`)}
  </nav>
  <div class="top-right">
    <span>${queues.map((queue) => html`<span class="ns-chip" title="namespace">${queue}</span> `)}</span>
    ${allowActions === false ? html`<span class="readonly" title="started without --allow-actions">read-only</span>` : ''}
    <span class="live" data-testid="live-status" data-state="static">not live</span>
  </div>
</header>
<main>
${body}
</main>
</body>
</html>`;
}
