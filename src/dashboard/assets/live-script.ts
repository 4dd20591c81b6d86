/**
 * The browser side of live updates, served as /assets/live.js (plain
 * JavaScript, no build step). It listens to /events; on a change it
 * re-fetches, once per burst, each region of the page (`data-live` = its
 * fragment's URL) whose `data-live-topics` name a topic that changed, and
 * swaps the region's content in place: no reload. It also ticks the ages
 * shown (`data-age-ms`) between updates, and says in the header whether
 * the page is live.
 */
export const LIVE_SCRIPT = String.raw`(() => {
  'use strict';
  const DEBOUNCE_MS = 200;
  const statusEl = document.querySelector('[data-testid="live-status"]');
  const pending = new Set();
  let timer;
  let lost = false;

  function setStatus(state, text) {
    if (!statusEl) return;
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  }

  function regions() {
    return Array.from(document.querySelectorAll('[data-live]'));
  }

  // Fetches of one region may overlap and answer out of order: only the latest one asked is shown.
  const asked = new WeakMap();
  async function refresh(region) {
    const url = region.getAttribute('data-live');
    const seq = (asked.get(region) || 0) + 1;
    asked.set(region, seq);
    try {
      const response = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
      if (!response.ok) {
        setStatus('error', response.status === 401 ? 'token refused' : 'update failed (' + response.status + ')');
        return;
      }
      const text = await response.text();
      if (asked.get(region) !== seq) return;
      region.innerHTML = text;
      if (statusEl && statusEl.dataset.state === 'error') setStatus('live', 'live');
      region.setAttribute('data-updated', String(Date.now()));
      tickAges();
    } catch (error) {
      setStatus('reconnecting', 'reconnecting…');
    }
  }

  function flush() {
    timer = undefined;
    const regionsToRefresh = Array.from(pending);
    pending.clear();
    regionsToRefresh.forEach(refresh);
  }

  function schedule(topics) {
    for (const region of regions()) {
      const wanted = (region.getAttribute('data-live-topics') || '').split(/\s+/);
      if (topics === undefined || topics.some((topic) => wanted.includes(topic))) pending.add(region);
    }
    if (pending.size > 0 && timer === undefined) timer = setTimeout(flush, DEBOUNCE_MS);
  }

  function formatAge(ms) {
    const seconds = Math.max(0, Math.floor(ms / 1000));
    if (seconds < 60) return seconds + 's';
    if (seconds < 3600) return Math.floor(seconds / 60) + 'm' + String(seconds % 60).padStart(2, '0') + 's';
    return Math.floor(seconds / 3600) + 'h' + String(Math.floor((seconds % 3600) / 60)).padStart(2, '0') + 'm';
  }

  const shownAt = new WeakMap();
  function tickAges() {
    const now = performance.now();
    for (const el of document.querySelectorAll('[data-age-ms]')) {
      if (!shownAt.has(el)) shownAt.set(el, now);
      el.textContent = formatAge(Number(el.getAttribute('data-age-ms')) + (now - shownAt.get(el)));
    }
  }
  setInterval(tickAges, 1000);

  if (regions().length === 0 || typeof EventSource === 'undefined') return;
  setStatus('connecting', 'connecting…');
  const source = new EventSource('/events');
  source.addEventListener('hello', () => {
    setStatus('live', 'live');
    // Back after a break: whatever changed meanwhile was not heard.
    if (lost) schedule(undefined);
    lost = false;
  });
  source.addEventListener('change', (event) => {
    try {
      schedule(JSON.parse(event.data).topics);
    } catch (error) {
      schedule(undefined);
    }
  });
  source.addEventListener('error', () => {
    lost = true;
    // Closed: the dashboard answered with a refusal (too many streams open), which a browser does not ask again.
    if (source.readyState === EventSource.CLOSED) setStatus('refused', 'not live: stream refused (reload to try again)');
    else setStatus('reconnecting', 'reconnecting…');
  });
})();
`;
