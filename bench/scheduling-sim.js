// The claim policy simulated without overhead on the scheduling benchmark's
// workload (bench/scheduling.js): what makespan / lower bound the rule
// itself gives, with and without time limits (1.5× true durations), apart
// from the time each run spends beyond its sleep on a real machine. Two
// workers; one blocked head per namespace, the oldest, held by amount;
// with limits, a later run may take what the head holds if it ends (now +
// its limit) by the head's shadow time (the deadline by which enough of its
// worker's runs have ended for it to fit). `node bench/scheduling-sim.js`.
import { lowerBoundMs, sweepWorkload } from './scheduling.js';

const CAPACITY = { gpu: 4, mem: 64 };
const NAMES = Object.keys(CAPACITY);

function simulate(workload, limitFactor) {
  // (A run ends a hair after its sleep, so no two end at the same instant, as on a real machine.)
  const staged = workload.map((run, score) => {
    const seconds = run.seconds + score * 1e-6;
    return { ...run, seconds, score, limit: limitFactor ? seconds * limitFactor : undefined };
  });
  const workers = [0, 1].map((id) => ({ id, free: { ...CAPACITY }, running: [], hold: undefined }));
  let now = 0;
  let makespan = 0;
  const fits = (run, free, held) => NAMES.every((name) => run[name] <= free[name] - (held ? held[name] : 0));
  const shadowOf = (worker, head) => {
    if (worker.running.some((run) => run.deadline === undefined)) return undefined;
    const free = { ...worker.free };
    for (const run of [...worker.running].sort((a, b) => a.deadline - b.deadline)) {
      for (const name of NAMES) free[name] += run[name];
      if (fits(head, free)) return run.deadline;
    }
    return undefined;
  };
  const start = (worker, run) => {
    staged.splice(staged.indexOf(run), 1);
    for (const name of NAMES) worker.free[name] -= run[name];
    worker.running.push({ ...run, end: now + run.seconds, deadline: run.limit === undefined ? undefined : now + run.limit });
    for (const other of workers) if (other.hold === run) other.hold = undefined;
  };
  // One claim: starts a run (true) or settles the worker's hold.
  const claim = (worker) => {
    const olderHold = workers.filter((w) => w !== worker && w.hold).map((w) => w.hold).sort((a, b) => a.score - b.score)[0];
    let head;
    for (const run of staged) {
      if (!fits(run, CAPACITY)) continue;
      if (fits(run, worker.free, head)) {
        worker.hold = head;
        start(worker, run);
        return true;
      }
      if (head && run.limit !== undefined && fits(run, worker.free)) {
        const shadow = shadowOf(worker, head);
        if (shadow !== undefined && now + run.limit <= shadow) {
          worker.hold = head;
          start(worker, run);
          return true;
        }
      }
      if (!head && !(olderHold && run.score >= olderHold.score)) head = run;
    }
    worker.hold = head;
    return false;
  };
  while (staged.length > 0 || workers.some((w) => w.running.length > 0)) {
    for (let again = true; again; ) {
      again = false;
      for (const worker of workers) while (claim(worker)) again = true;
    }
    const next = Math.min(...workers.flatMap((w) => w.running.map((run) => run.end)));
    now = next;
    makespan = Math.max(makespan, now);
    for (const worker of workers) {
      for (const run of worker.running.filter((r) => r.end <= now)) {
        for (const name of NAMES) worker.free[name] += run[name];
      }
      worker.running = worker.running.filter((r) => r.end > now);
    }
  }
  return makespan * 1000;
}

const seeds = [undefined, ...Array.from({ length: 39 }, (_, i) => 1000 + i)];
for (const [label, factor] of [['no time limits', undefined], ['time limits 1.5x durations', 1.5], ['exact time limits', 1]]) {
  const ratios = seeds.map((seed) => {
    const workload = seed === undefined ? sweepWorkload() : sweepWorkload(60, seed);
    return simulate(workload, factor) / lowerBoundMs(workload);
  });
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  console.log(`${label.padEnd(28)} benchmark workload ${ratios[0].toFixed(3)}x, mean of ${ratios.length} workloads ${mean.toFixed(3)}x`);
}
