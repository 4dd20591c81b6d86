/**
 * The dashboard's stylesheet, served as /assets/style.css (no fonts or
 * anything else fetched: system fonts). Status colours are CSS variables
 * (`--status-running`, …) so every page shows a status the same way.
 */
export const STYLE_CSS = String.raw`
:root {
  --bg: #f4f6f9;
  --panel: #ffffff;
  --ink: #1b2330;
  --muted: #5f6b7a;
  --line: #e2e6ec;
  --accent: #2f6fdf;
  --accent-soft: #e6eefc;
  --radius: 10px;
  --shadow: 0 1px 2px rgba(16, 24, 40, .06), 0 1px 3px rgba(16, 24, 40, .08);
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --status-staged: #2f6fdf;
  --status-held: #8a5cd1;
  --status-running: #139b5a;
  --status-completed: #5b8a72;
  --status-failed: #d64545;
  --status-canceled: #7b8594;
  --status-lost: #e07b1a;
  --status-rejected: #a8323e;
  --status-timeout: #c9671d;
  --bar-used: #2f6fdf;
  --bar-held: #f0b429;
  --bar-track: #e9edf3;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
}
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, .mono { font-family: var(--mono); font-size: .92em; }

/* Header and navigation */
.top {
  position: sticky; top: 0; z-index: 10;
  display: flex; align-items: center; gap: 1.25rem; flex-wrap: wrap;
  padding: .6rem 1.5rem;
  background: #111827; color: #e5e9f0;
}
.brand { font-weight: 700; font-size: 1.1rem; color: #fff; letter-spacing: .02em; display: flex; align-items: center; gap: .45rem; }
.brand-mark { display: inline-block; width: 14px; height: 14px; border-radius: 3px; background: linear-gradient(135deg, #4f8ff7, #22c38e); }
.nav { display: flex; gap: .25rem; flex-wrap: wrap; }
.nav::-webkit-scrollbar { display: none; }
.nav a { color: #c8d0dc; padding: .3rem .65rem; border-radius: 6px; font-size: .93rem; }
.nav a:hover { background: #1f2937; color: #fff; text-decoration: none; }
.nav a[aria-current="page"] { background: #2b3647; color: #fff; }
.top-right { margin-left: auto; display: flex; align-items: center; gap: .75rem; font-size: .85rem; color: #aab4c3; }
.live { display: inline-flex; align-items: center; gap: .4rem; }
.live::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: #6b7280; }
.live[data-state="live"]::before { background: #22c38e; box-shadow: 0 0 0 3px rgba(34, 195, 142, .25); }
.live[data-state="reconnecting"]::before, .live[data-state="connecting"]::before { background: #f0b429; }
.live[data-state="error"]::before, .live[data-state="refused"]::before { background: #ef4444; }
.ns-chip { background: #1f2937; border: 1px solid #374151; padding: .05rem .5rem; border-radius: 999px; font-family: var(--mono); font-size: .8rem; color: #dbe2ec; }
.readonly { border: 1px solid #374151; padding: .05rem .5rem; border-radius: 999px; }

main { max-width: 1240px; margin: 0 auto; padding: 1.25rem 1.5rem 3rem; }
h1 { font-size: 1.35rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.05rem; margin: 0 0 .75rem; }
h3 { font-size: .95rem; margin: 0 0 .5rem; color: var(--muted); font-weight: 600; }
.lede { color: var(--muted); margin: -.6rem 0 1rem; }

/* Panels */
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1rem 1.1rem; min-width: 0; }
.panel + .panel { margin-top: 1rem; }
.grid > .panel + .panel, .workers > .panel + .panel { margin-top: 0; }
.panel-head { display: flex; align-items: baseline; gap: .6rem; flex-wrap: wrap; margin-bottom: .75rem; }
.panel-head h2 { margin: 0; }
.panel-head .sub { color: var(--muted); font-size: .85rem; }
.empty { color: var(--muted); font-style: italic; margin: .25rem 0; }

/* Status counts */
.counts { display: grid; grid-template-columns: repeat(auto-fill, minmax(92px, 1fr)); gap: .5rem; }
.count { border: 1px solid var(--line); border-left: 4px solid var(--c, var(--muted)); border-radius: 8px; padding: .4rem .6rem; }
.count .n { font-size: 1.35rem; font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1.2; }
.count .label { font-size: .78rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.count.zero .n { color: #a4adba; }
[data-status="staged"] { --c: var(--status-staged); }
[data-status="held"] { --c: var(--status-held); }
[data-status="running"] { --c: var(--status-running); }
[data-status="completed"] { --c: var(--status-completed); }
[data-status="failed"] { --c: var(--status-failed); }
[data-status="canceled"] { --c: var(--status-canceled); }
[data-status="lost"] { --c: var(--status-lost); }
[data-status="rejected"] { --c: var(--status-rejected); }
[data-status="timeout"] { --c: var(--status-timeout); }
.pill { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .78rem; font-weight: 600; color: #fff; background: var(--c, var(--muted)); white-space: nowrap; }
.pill.soft { background: var(--accent-soft); color: var(--accent); }
.pill.warn { background: #fdf1d6; color: #8a5a00; }
.pill.bad { background: #fde2e2; color: #a12828; }
.pill.ok { background: #dcf5e9; color: #0d6b3e; }

/* Tables */
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; font-size: .9rem; }
th, td { text-align: left; padding: .4rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: .78rem; text-transform: uppercase; letter-spacing: .04em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: 0; }
.clip { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.why { color: var(--muted); font-size: .85rem; min-width: 10rem; }
.wrap-anywhere { overflow-wrap: anywhere; word-break: break-word; }

/* Bars: capacity vs reserved */
.bars { display: grid; gap: .45rem; }
.bar-row { display: grid; grid-template-columns: 5.5rem 1fr minmax(5.5rem, auto); gap: .6rem; align-items: center; font-size: .88rem; }
.bar-name { font-family: var(--mono); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar { position: relative; height: 12px; background: var(--bar-track); border-radius: 999px; overflow: hidden; }
.bar-fill { position: absolute; inset: 0 auto 0 0; background: var(--bar-used); border-radius: 999px; transition: width .4s ease; }
.bar-fill.full { background: var(--status-failed); }
.bar-held { position: absolute; top: 0; bottom: 0; background: repeating-linear-gradient(45deg, var(--bar-held), var(--bar-held) 4px, #f7d070 4px, #f7d070 8px); }
.bar-fill.high { background: var(--status-lost); }
.bar-val { text-align: right; font-variant-numeric: tabular-nums; color: var(--muted); white-space: nowrap; }

/* Workers */
.workers { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); }
.worker-head { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; margin-bottom: .35rem; }
.worker-name { font-weight: 700; font-family: var(--mono); overflow-wrap: anywhere; }
.meta { display: flex; flex-wrap: wrap; gap: .25rem 1rem; color: var(--muted); font-size: .84rem; margin-bottom: .75rem; }
.meta b { color: var(--ink); font-weight: 600; }
.section-label { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: .8rem 0 .35rem; }
.gpus { display: grid; grid-template-columns: repeat(auto-fill, minmax(74px, 1fr)); gap: .4rem; }
.gpu { border: 1px solid var(--line); border-radius: 8px; padding: .35rem .45rem; font-size: .78rem; background: #fafbfc; min-width: 0; }
.gpu .gpu-id { font-weight: 700; font-family: var(--mono); }
.gpu .gpu-state { display: block; color: var(--muted); }
.gpu .gpu-run { display: block; font-family: var(--mono); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gpu .meter { display: block; height: 6px; border-radius: 999px; background: var(--bar-track); margin-top: .3rem; overflow: hidden; }
.gpu .meter > span { display: block; height: 100%; background: var(--status-running); }
.gpu[data-state="busy"] { border-color: #9bd8b9; background: #effaf4; }
.gpu[data-state="partial"] { border-color: #f3d48a; background: #fffaeb; }
.gpu[data-state="partial"] .meter > span { background: var(--bar-held); }
.gpu .gpu-outside { display: block; font-size: .72rem; color: #8a3b12; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gpu .gpu-memory { display: block; font-size: .72rem; color: var(--muted); overflow-wrap: anywhere; }
.gpu[data-probe="busy"], .gpu[data-probe="lost"], .gpu[data-probe="stale"] { border-color: #f0b08f; background: #fff4ee; }
.run-list { list-style: none; margin: 0; padding: 0; display: grid; gap: .25rem; font-size: .86rem; }
.run-list li { display: flex; gap: .5rem; align-items: baseline; min-width: 0; }
.run-list .cmd { color: var(--muted); font-family: var(--mono); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
.holding { margin-top: .6rem; padding: .45rem .6rem; border-radius: 8px; background: #fff8e6; border: 1px solid #f5dfa3; font-size: .86rem; overflow-wrap: anywhere; }

/* Charts */
.chart-fig { margin: 0; }
.chart-box { display: grid; grid-template-columns: auto 1fr auto; gap: .4rem; align-items: stretch; }
.chart { width: 100%; height: 140px; display: block; }
.chart-y { display: flex; flex-direction: column; justify-content: space-between; font-size: .72rem; color: var(--muted); text-align: right; min-width: 1.2rem; font-variant-numeric: tabular-nums; }
.chart-y.right { text-align: left; min-width: 2.2rem; }
.chart-x { display: flex; justify-content: space-between; font-size: .72rem; color: var(--muted); margin: .2rem 2.6rem 0 1.6rem; }
.chart .axis { stroke: #cfd6df; stroke-width: 1; vector-effect: non-scaling-stroke; }
.chart .grid-line { stroke: #eef1f5; stroke-width: 1; vector-effect: non-scaling-stroke; }
.chart .started { fill: var(--status-staged); }
.chart .finished { fill: var(--status-running); }
.chart .failed { fill: var(--status-failed); }
.chart .duration { stroke: var(--status-held); stroke-width: 2; fill: none; stroke-linejoin: round; }
.legend { display: flex; gap: .3rem 1rem; flex-wrap: wrap; font-size: .8rem; color: var(--muted); margin-top: .35rem; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: .3rem; vertical-align: -1px; background: var(--k); }
.legend .k-started { --k: var(--status-staged); }
.legend .k-completed { --k: var(--status-running); }
.legend .k-failed { --k: var(--status-failed); }
.legend .k-duration { --k: var(--status-held); }
.ns-body { display: grid; gap: .25rem 1.5rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 320px), 1fr)); align-items: start; }

.ns-block + .ns-block { margin-top: 1.5rem; }
.sub { color: var(--muted); font-size: .85rem; }
.foot { color: var(--muted); font-size: .8rem; margin-top: 1.5rem; }

@media (max-width: 640px) {
  body { font-size: 14px; }
  .top { padding: .5rem .75rem; gap: .5rem .75rem; }
  .top-right { margin-left: auto; gap: .5rem; min-width: 0; }
  .top-right .ns-chip { max-width: 9rem; overflow: hidden; text-overflow: ellipsis; display: inline-block; vertical-align: middle; }
  .nav { order: 3; width: 100%; flex-wrap: nowrap; overflow-x: auto; scrollbar-width: none; margin: 0 -.25rem; }
  .nav a { padding: .25rem .45rem; white-space: nowrap; }
  main { padding: .9rem .75rem 2rem; }
  .grid, .workers { grid-template-columns: 1fr; }
  .panel { padding: .85rem .8rem; }
  .bar-row { grid-template-columns: 4.5rem 1fr auto; gap: .45rem; }
  .clip { max-width: 12rem; }
  .run-list li { flex-wrap: wrap; gap: .15rem .5rem; }
  .run-list .cmd { flex-basis: 100%; }
}
`;
