/** GET /assets/*: the stylesheet, the live script and the icon, all from memory (nothing fetched elsewhere). */
import type { Hono } from 'hono';
import type { DashboardEnv } from '../env.js';
import { FAVICON_SVG } from './favicon.js';
import { LIVE_SCRIPT } from './live-script.js';
import { STYLE_CSS } from './style.js';

const ASSETS: Record<string, { body: string; type: string }> = {
  'style.css': { body: STYLE_CSS, type: 'text/css; charset=utf-8' },
  'live.js': { body: LIVE_SCRIPT, type: 'text/javascript; charset=utf-8' },
  'favicon.svg': { body: FAVICON_SVG, type: 'image/svg+xml' },
};

export function registerAssets(app: Hono<DashboardEnv>): void {
  for (const [name, { body, type }] of Object.entries(ASSETS)) {
    app.get(`/assets/${name}`, (c) => c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache' }));
  }
}
