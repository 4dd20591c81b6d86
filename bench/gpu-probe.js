// The GPU probe (src/worker/gpu-watch.ts), measured through what users run:
// a CLI worker with `--gpus auto` on 8 devices of the stand-in nvidia-smi
// (test/fixtures/fake-gpu), idle, for WINDOW_S seconds with the default
// probe interval against the same worker with `--gpu-probe-interval 0`:
// the worker's own CPU (utime + stime of its process) and that of the
// nvidia-smi processes it waited for (cutime + cstime), as shares of one
// core. The stand-in is a Node script, far costlier to start than the
// real tool: its share is an upper bound of what nvidia-smi costs. Then
// the time from a foreign process leaving a device (the state file
// changed) to the run waiting for that device starting (its job's
// processedOn, the server's clock), at random points of the interval,
// against the bound the issue sets: the interval plus one second. And the
// same idle worker on 8 MIG-enabled GPUs of 7 slices each (56 devices),
// whose probe also reads `nvidia-smi -q -x` for the slices.
import { execa } from 'execa';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FitqClient } from '../dist/index.js';

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const FAKE = fileURLToPath(new URL('../test/fixtures/fake-gpu', import.meta.url));
const WINDOW_S = Number(process.env.BENCH_PROBE_WINDOW ?? 30);
const TRIALS = Number(process.env.BENCH_PROBE_TRIALS ?? 6);
const DEVICES = 8;
const INTERVAL_MS = 5_000;
const TICKS = 100; // clock ticks per second (getconf CLK_TCK on Linux)
const SLICES = 7;

function box(processes = [], mig = false) {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-bench-gpu-'));
  const file = join(dir, 'state.json');
  const gpus = Array.from({ length: DEVICES }, (_, i) => ({
    name: 'NVIDIA A100-SXM4-40GB', uuid: `GPU-bench-${i}`, memoryTotalMiB: 40960, memoryUsedMiB: 412,
    ...(mig ? { mig: Array.from({ length: SLICES }, (_, k) => ({ profile: '1g.5gb', uuid: `MIG-bench-${i}-${k}`, gi: 7 + k })) } : {}),
  }));
  const write = (state) => {
    writeFileSync(`${file}.new`, JSON.stringify(state));
    renameSync(`${file}.new`, file);
  };
  write({ gpus, processes });
  return { env: { FAKE_GPU_STATE: file, PATH: `${FAKE}:${process.env.PATH}` }, write: (next) => write({ gpus, ...next }) };
}

/** utime+stime and cutime+cstime of a process, in seconds. */
function cpu(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]) / TICKS);
  return { own: utime + stime, children: cutime + cstime };
}

function startWorker(url, queue, env, args) {
  const child = execa('node', [BIN, 'worker', '--gpus', 'auto', '--log-format', 'json', ...args], {
    env: { ...env, FITQ_REDIS_URL: url, FITQ_QUEUE: queue }, stdin: 'ignore', buffer: false, reject: false,
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const said = (text) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker never said ${text}: ${out}`)), 30_000);
    const check = () => {
      if (out.includes(text)) {
        clearTimeout(timer);
        resolve();
      } else setTimeout(check, 20);
    };
    check();
  });
  return { child, said };
}

/** An idle worker's CPU over the window: its own and its waited children's, as shares of one core. */
async function idleCost(url, newQueue, args, mig = false) {
  const { env } = box([], mig);
  const worker = startWorker(url, newQueue(), env, args);
  await worker.said(mig ? 'GPU devices: 100,101' : 'GPU devices: 0,1,2,3,4,5,6,7');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const before = cpu(worker.child.pid);
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_S * 1000));
  const after = cpu(worker.child.pid);
  const seconds = (performance.now() - start) / 1000;
  worker.child.kill('SIGTERM');
  await worker.child;
  return { own: (after.own - before.own) / seconds, children: (after.children - before.children) / seconds };
}

/** Foreign process gone -> the waiting run started, ms, for each trial. */
async function freedLatency(url, newQueue) {
  const queue = newQueue();
  const held = { processes: [{ gpu: 0, pid: 4242, usedMiB: 21800, name: 'python' }] };
  const gpu = box(held.processes);
  const worker = startWorker(url, queue, gpu.env, []);
  await worker.said('GPU devices');
  const client = await FitqClient.connect({ redisUrl: url, queue });
  const latencies = [];
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      // Hold every device, stage a run, let the worker see them all busy.
      gpu.write({ processes: Array.from({ length: DEVICES }, (_, i) => ({ gpu: i, pid: 4242 + i, usedMiB: 100, name: 'python' })) });
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 500));
      const { runs } = await client.stage({ command: ['true'], resources: 'gpu=1' });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * INTERVAL_MS));
      const [seconds, micros] = await client.redis.time();
      const freedAt = Number(seconds) * 1000 + Number(micros) / 1000;
      gpu.write({ processes: [] });
      const run = await client.waitForEnd(runs[0].id, 60_000);
      latencies.push(Number(run.startedAt) - freedAt);
    }
  } finally {
    await client.close();
    worker.child.kill('SIGTERM');
    await worker.child;
  }
  return latencies;
}

export async function gpuProbeCost(url, newQueue) {
  const on = await idleCost(url, newQueue, []);
  const off = await idleCost(url, newQueue, ['--gpu-probe-interval', '0']);
  const mig = await idleCost(url, newQueue, [], true);
  const migOff = await idleCost(url, newQueue, ['--gpu-probe-interval', '0'], true);
  const latencies = await freedLatency(url, newQueue);
  return { on, off, mig, migOff, latencies, windowSeconds: WINDOW_S, devices: DEVICES, slices: DEVICES * SLICES, intervalMs: INTERVAL_MS };
}
