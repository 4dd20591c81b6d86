/**
 * `fitq top`'s frame: a snapshot laid out as lines no wider than the
 * terminal and no more than its rows, each section cut with "… N more"
 * when all of them do not fit (80×24 shows some of each). Pure: screen.ts
 * draws the lines. Every value read from Redis is put on one line with its
 * control characters escaped (oneLine), and cut by display width.
 */
import cliTruncate from 'cli-truncate';
import stringWidth from 'string-width';
import { RUN_STATUSES } from '../model/run-record.js';
import { deviceState, type WorkerRecord, workerState } from '../model/worker-record.js';
import { describeLiveness } from '../model/liveness.js';
import { formatCommand } from '../present/run-table.js';
import { sortResources } from '../resources/spec.js';
import { oneLine } from '../text/quote.js';
import { formatClock, formatDuration } from '../units/time.js';
import { capacityBar, BAR_WIDTH } from './bar.js';
import type { TopShape, TopSnapshot } from './snapshot.js';

export interface TopFrame {
  queue: string;
  /** What was last read; none yet before the first read. */
  snapshot?: TopSnapshot;
  /** Why the last read failed (Redis away), shown above what was read before. */
  problem?: string;
  now: number;
}

export interface FrameSize {
  columns: number;
  /** Infinity: every line (fitq top --once). */
  rows: number;
}

/** A part of the frame: its title, its table's header, and its items, each one or more lines. */
interface Section {
  title: string;
  header?: string;
  items: string[][];
  /** Said in place of the items when there are none. */
  empty: string;
  /** Items there are beyond `items` (never read). */
  unread?: number;
}

export function renderTop(frame: TopFrame, size: FrameSize): string[] {
  const width = Math.max(20, size.columns);
  const { snapshot } = frame;
  const lines = [headerLine(frame, width)];
  if (frame.problem !== undefined) {
    const since = snapshot === undefined ? '' : `; shown: as read at ${formatClock(snapshot.at)}`;
    lines.push(`! ${oneLine(frame.problem)}${since}`);
  }
  if (snapshot === undefined) {
    if (frame.problem === undefined) lines.push('reading…');
    return cut(lines, width, size.rows);
  }
  lines.push(countsLine(snapshot));
  const sections = [workersSection(snapshot, width), runningSection(snapshot, frame.now), stagedSection(snapshot)];
  if (snapshot.pool.length > 0) sections.push(poolSection(snapshot, width));
  lines.push(...layOut(sections, size.rows - lines.length));
  return cut(lines, width, size.rows);
}

/** Lines cut to the width and the rows. */
function cut(lines: readonly string[], width: number, rows: number): string[] {
  return lines.slice(0, rows).map((line) => (stringWidth(line) > width ? cliTruncate(line, width) : line));
}

function headerLine(frame: TopFrame, width: number): string {
  const paused = frame.snapshot?.paused ? '  PAUSED (fitq resume)' : '';
  const left = `fitq top  queue ${oneLine(frame.queue)}  ${formatClock(frame.now)}${paused}`;
  const right = 'q quit';
  const gap = width - stringWidth(left) - right.length;
  return gap >= 2 ? `${left}${' '.repeat(gap)}${right}` : left;
}

/** `running 2  staged 14  held 1  completed 310  failed 2`: running and staged always, other statuses when some run has them. */
function countsLine({ counts }: TopSnapshot): string {
  const parts = RUN_STATUSES.flatMap((status) => {
    const count = counts.counts[status] ?? 0;
    return count > 0 || status === 'running' || status === 'staged' ? [`${status} ${count}`] : [];
  });
  for (const { label, count } of counts.lumped) parts.push(`${label} ${count}`);
  return parts.join('  ');
}

/**
 * Takes items from each section in turn, one at a time, while the lines
 * fit: each section shows some of its items when all do not fit.
 */
function layOut(sections: readonly Section[], rows: number): string[] {
  const shown = sections.map(() => 0);
  const linesOf = (section: Section, count: number): number => {
    if (section.items.length === 0) return 2; // title, and what it says for none
    const hidden = section.items.length - count + (section.unread ?? 0);
    return (section.header === undefined ? 1 : 2) + section.items.slice(0, count).reduce((sum, item) => sum + item.length, 0) + (hidden > 0 ? 1 : 0);
  };
  const total = () => sections.reduce((sum, section, i) => sum + linesOf(section, shown[i]!), 0);
  // Everything fits (fitq top --once, a quiet queue): no item at a time.
  sections.forEach((section, i) => (shown[i] = section.items.length));
  if (total() > rows) shown.fill(0);
  for (let grew = true; grew && total() < rows; ) {
    grew = false;
    sections.forEach((section, i) => {
      if (shown[i]! >= section.items.length) return;
      shown[i]! += 1;
      if (total() <= rows) grew = true;
      else shown[i]! -= 1;
    });
  }
  return sections.flatMap((section, i) => {
    if (section.items.length === 0) return [section.title, `  ${section.empty}`];
    const hidden = section.items.length - shown[i]! + (section.unread ?? 0);
    return [
      section.title,
      ...(section.header === undefined ? [] : [section.header]),
      ...section.items.slice(0, shown[i]).flat(),
      ...(hidden > 0 ? [`  … ${hidden} more`] : []),
    ];
  });
}

function workersSection(snapshot: TopSnapshot, width: number): Section {
  const nameWidth = Math.min(20, Math.max(6, ...snapshot.workers.map((worker) => stringWidth(oneLine(worker.name)))));
  return {
    title: `WORKERS ${snapshot.workers.length}`,
    items: snapshot.workers.map((worker) => workerLines(worker, snapshot, nameWidth, width)),
    empty: 'no live worker (start one: fitq worker --resources gpu=2,mem=32G)',
  };
}

/** A worker: its name, state and runs; its resources as bars, as many a line as fit; its GPU devices and what holds each. */
function workerLines(worker: WorkerRecord, snapshot: TopSnapshot, nameWidth: number, width: number): string[] {
  const slots = worker.concurrency > 0 ? `${worker.runs.length}/${worker.concurrency}` : String(worker.runs.length);
  const liveness = worker.liveness.responding ? '' : `  ${describeLiveness(worker.liveness)}`;
  const head = `  ${fit(oneLine(worker.name), nameWidth)}  ${workerState(worker)}  runs ${slots}  ${oneLine(worker.host)}${liveness}`;
  const bars = [...sortResources(worker.capacity)]
    .filter(([name]) => name !== 'gpu' || worker.devices.size === 0)
    .map(([name, capacity]) => capacityBar(name, capacity - (worker.free.get(name) ?? 0n), capacity));
  const lines = [head, ...barLines(bars, width)];
  if (worker.devices.size > 0) lines.push(devicesLine(worker, snapshot));
  return lines;
}

/** Bars side by side, as many as the width takes, under a worker's name. */
function barLines(bars: readonly string[], width: number): string[] {
  const perLine = Math.max(1, Math.floor((width - 4) / (BAR_WIDTH + 2)));
  const lines: string[] = [];
  for (let i = 0; i < bars.length; i += perLine) lines.push(`    ${bars.slice(i, i + perLine).join('  ')}`);
  return lines;
}

/** `    GPU 0:3f2a9c1b 1:free 2:foreign 3:0.5 used`: the runs on each device, else its state. */
function devicesLine(worker: WorkerRecord, snapshot: TopSnapshot): string {
  const runsOn = (index: number) =>
    snapshot.running.filter((run) => run.worker === worker.name && (run.devices ?? []).includes(index)).map((run) => shortId(run.id));
  const devices = [...worker.devices.keys()].map((index) => `${index}:${runsOn(index).join('+') || deviceState(worker, index)}`);
  return `    GPU ${devices.join('  ')}`;
}

function runningSection(snapshot: TopSnapshot, now: number): Section {
  const workerWidth = Math.min(16, Math.max(6, ...snapshot.running.map((run) => stringWidth(oneLine(run.worker ?? '')))));
  const row = (id: string, worker: string, gpus: string, time: string, command: string) =>
    `  ${fit(id, 12)}  ${fit(worker, workerWidth)}  ${fit(gpus, 5)}  ${time.padStart(7)}  ${command}`;
  return {
    title: `RUNNING ${snapshot.running.length}`,
    header: row('ID', 'WORKER', 'GPUS', 'TIME', 'COMMAND'),
    items: snapshot.running.map((run) => [
      row(
        run.id,
        oneLine(run.worker ?? ''),
        (run.devices ?? []).join(',') || '-',
        formatDuration(run.startedAt === undefined ? undefined : Math.max(0, now - run.startedAt)),
        formatCommand(run),
      ),
    ]),
    empty: 'nothing runs',
  };
}

function stagedSection(snapshot: TopSnapshot): Section {
  const demandsWidth = Math.min(28, Math.max(7, ...snapshot.shapes.map((shape) => stringWidth(shapeDemands(shape)))));
  const row = (runs: string, demands: string, first: string, why: string) => `  ${runs.padStart(5)}  ${fit(demands, demandsWidth)}  ${fit(first, 12)}  ${why}`;
  const staged = snapshot.shapes.reduce((sum, shape) => sum + shape.count, 0);
  return {
    title: `STAGED ${staged} in ${snapshot.shapeTotal} shape${snapshot.shapeTotal === 1 ? '' : 's'} (the first of each: why it waits)`,
    header: row('RUNS', 'DEMANDS', 'FIRST', 'WHY'),
    items: snapshot.shapes.map((shape) => [row(String(shape.count), shapeDemands(shape), shape.head ?? '', oneLine(shape.why ?? ''))]),
    unread: Math.max(0, snapshot.shapeTotal - snapshot.shapes.length),
    empty: 'nothing staged waits for a worker',
  };
}

/** A shape's demands, its pinned devices and its time limit: `gpu=1 mem=8G @0 ≤1h00m`. */
function shapeDemands(shape: TopShape): string {
  const pins = shape.gpus.length > 0 ? ` @${shape.gpus.join(',')}` : '';
  const limit = shape.timeLimitMs === undefined ? '' : ` ≤${formatDuration(shape.timeLimitMs)}`;
  return `${shape.demands}${pins}${limit}`;
}

function poolSection(snapshot: TopSnapshot, width: number): Section {
  const bars = snapshot.pool.map(({ name, capacity, used }) => capacityBar(name, used, capacity));
  return { title: 'POOL', items: barLines(bars, width).map((line) => [line]), empty: '' };
}

/** The first 8 characters of a run id, as devices show which run holds them. */
function shortId(id: string): string {
  return id.slice(0, 8);
}

/** Text padded or cut to exactly `width` columns. */
function fit(text: string, width: number): string {
  const cutText = stringWidth(text) > width ? cliTruncate(text, width) : text;
  return cutText + ' '.repeat(Math.max(0, width - stringWidth(cutText)));
}
