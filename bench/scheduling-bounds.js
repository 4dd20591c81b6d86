// What any policy could reach on the scheduling benchmark's workload
// (bench/scheduling.js), simulated without overhead: policies that keep the
// queue's order (a later run never delays an earlier one's reservation)
// against schedules free to reorder. fitq's own rule is simulated in
// bench/scheduling-sim.js. `node bench/scheduling-bounds.js`.
//
//   reservations K   Slurm-style backfill on a timeline built from the time
//                    limits: walking the queue in order, a run starts now if
//                    it fits now and, for its whole limit, beside the
//                    reservations of the first K blocked runs before it
//                    (each reserved at its earliest start on any worker).
//                    K = 1 is EASY backfill, K = all conservative backfill.
//   list, in order   start any run that fits, oldest first, holding nothing
//                    (big runs may starve under a stream of small ones).
//   longest first    the same, the queue sorted by time limit, longest first
//                    (LPT: a reordering, not a backfill).
//   best order found a local search over orders of the list schedule: an
//                    offline schedule close to the optimum.
import { lowerBoundMs, prng, sweepWorkload } from './scheduling.js';

const CAPACITY = { gpu: 4, mem: 64 };
const NAMES = Object.keys(CAPACITY);
const WORKERS = 2;
const LIMIT_FACTOR = 1.5;

const fitsIn = (run, free) => NAMES.every((name) => run[name] <= free[name] + 1e-9);

/** Runs in staging order with their score and a time limit LIMIT_FACTOR × their duration (ending a hair apart). */
function staged(workload) {
  return workload.map((run, score) => {
    const seconds = run.seconds + score * 1e-6;
    return { ...run, seconds, score, limit: seconds * LIMIT_FACTOR };
  });
}

/** Runs the schedule `startSome(now, workers, queue)` makes (it starts runs through `start`); returns the makespan in ms. */
function play(queue, startSome) {
  const workers = Array.from({ length: WORKERS }, () => ({ free: { ...CAPACITY }, running: [] }));
  let now = 0;
  const start = (worker, run) => {
    queue.splice(queue.indexOf(run), 1);
    for (const name of NAMES) worker.free[name] -= run[name];
    worker.running.push({ ...run, end: now + run.seconds, deadline: now + run.limit });
  };
  while (queue.length > 0 || workers.some((worker) => worker.running.length > 0)) {
    startSome(now, workers, queue, start);
    now = Math.min(...workers.flatMap((worker) => worker.running.map((run) => run.end)));
    for (const worker of workers) {
      for (const run of worker.running.filter((r) => r.end <= now)) for (const name of NAMES) worker.free[name] += run[name];
      worker.running = worker.running.filter((r) => r.end > now);
    }
  }
  return now * 1000;
}

/** List scheduling: any run that fits on a worker starts, in queue order. */
function listSchedule(order) {
  return play([...order], (now, workers, queue, start) => {
    for (const run of [...queue]) {
      const worker = workers.find((w) => fitsIn(run, w.free));
      if (worker) start(worker, run);
    }
  });
}

/** Least free capacity on `worker` over [from, to), given its running runs' deadlines and the reservations on it. */
function leastFree(worker, reservations, from, to) {
  const times = [from];
  for (const run of worker.running) if (run.deadline > from && run.deadline < to) times.push(run.deadline);
  for (const r of reservations) if (r.worker === worker && r.start > from && r.start < to) times.push(r.start);
  const least = { ...CAPACITY };
  for (const t of times) {
    const free = { ...CAPACITY };
    for (const run of worker.running) if (run.deadline > t) for (const name of NAMES) free[name] -= run[name];
    for (const r of reservations) if (r.worker === worker && r.start <= t && r.end > t) for (const name of NAMES) free[name] -= r.run[name];
    for (const name of NAMES) least[name] = Math.min(least[name], free[name]);
  }
  return least;
}

/** Backfill with reservations for the first `depth` blocked runs, on a timeline of time limits. */
function reservationSchedule(workload, depth) {
  return play(staged(workload), (now, workers, queue, start) => {
    for (let started = true; started; ) {
      started = false;
      const reservations = [];
      for (const run of queue) {
        const earliest = workers.map((worker) => {
          const times = [now, ...worker.running.map((r) => r.deadline), ...reservations.filter((r) => r.worker === worker).map((r) => r.end)];
          const at = times.filter((t) => t >= now).sort((a, b) => a - b).find((t) => fitsIn(run, leastFree(worker, reservations, t, t + run.limit)));
          return { worker, at: at ?? Infinity };
        });
        const nowOn = earliest.find(({ worker, at }) => at === now && fitsIn(run, worker.free));
        if (nowOn) {
          start(nowOn.worker, run);
          started = true;
          break;
        }
        if (reservations.length < depth) {
          const first = earliest.sort((a, b) => a.at - b.at)[0];
          reservations.push({ worker: first.worker, run, start: first.at, end: first.at + run.limit });
        }
      }
    }
  });
}

/** The shortest list schedule found by swapping pairs in the order, from longest first. */
function bestOrderFound(workload, steps = 5000) {
  const random = prng(7);
  let order = staged(workload).sort((a, b) => b.limit - a.limit);
  let best = listSchedule(order);
  for (let i = 0; i < steps; i++) {
    const next = [...order];
    const x = Math.floor(random() * next.length);
    const y = Math.floor(random() * next.length);
    [next[x], next[y]] = [next[y], next[x]];
    const makespan = listSchedule(next);
    if (makespan <= best) [order, best] = [next, makespan];
  }
  return best;
}

const variants = [
  ['in order: reservations K=1 (EASY)', (w) => reservationSchedule(w, 1)],
  ['in order: reservations K=all', (w) => reservationSchedule(w, Infinity)],
  ['keeps the order: list, no holds', (w) => listSchedule(staged(w))],
  ['reorders: longest limit first, no holds', (w) => listSchedule(staged(w).sort((a, b) => b.limit - a.limit))],
  ['reorders: best order found (offline)', (w) => bestOrderFound(w)],
];
const workloads = [sweepWorkload(), ...Array.from({ length: 9 }, (_, i) => sweepWorkload(60, 1000 + i))];
for (const [label, schedule] of variants) {
  const ratios = workloads.map((workload) => schedule(workload) / lowerBoundMs(workload));
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  console.log(`${label.padEnd(42)} benchmark workload ${ratios[0].toFixed(3)}x, mean of ${ratios.length} workloads ${mean.toFixed(3)}x`);
}
