/**
 * One read of Redis per change, however many pages are open: a fragment's
 * HTML is kept until the live feed hears a change on one of its topics (or
 * for a few seconds at most, for what time alone changes: ages, the last
 * hour's minutes), and pages asking meanwhile share it, or share the read
 * under way. Without a live feed nothing is kept.
 */
import type { DashboardContext } from './context.js';
import type { LiveTopic } from '../live/feed.js';

const MAX_AGE_MS = 3000;

interface Entry {
  key: string;
  at: number;
  html: Promise<string>;
}

const caches = new WeakMap<DashboardContext, Map<string, Entry>>();

export function cachedFragment(context: DashboardContext, name: string, topics: readonly LiveTopic[], render: () => Promise<string>): Promise<string> {
  const live = context.live;
  if (!live) return render();
  const key = topics.map((topic) => live.generation(topic)).join('.');
  const cache = caches.get(context) ?? new Map<string, Entry>();
  caches.set(context, cache);
  const entry = cache.get(name);
  if (entry && entry.key === key && performance.now() - entry.at < MAX_AGE_MS) return entry.html;
  const html = render();
  cache.set(name, { key, at: performance.now(), html });
  // A failed read is not kept: the next page asks again.
  html.catch(() => {
    if (cache.get(name)?.html === html) cache.delete(name);
  });
  return html;
}
