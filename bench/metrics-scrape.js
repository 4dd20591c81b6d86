// The dashboard's /metrics against the number of demand shapes: a scrape
// (renderNamespaceMetrics: the read script, then the Prometheus text) of a
// namespace with 100,000 staged runs over 20,000 shapes, against a scrape of
// the same runs in one shape, in the same run. Each is the median of
// SCRAPES scrapes after one to warm up; the text's size, its series and
// how long the read script holds Redis are reported beside it, and, for
// comparison, a scrape showing every shape (what /metrics was before it
// showed a bounded number). Then the same number of runs canceled (ended
// runs of every status but completed share BullMQ's failed set, counted by
// status a part at a time): the scrape and the longest script call, timed
// by Redis's SLOWLOG.
import { FitqClient } from '../dist/index.js';
import { renderNamespaceMetrics } from '../dist/metrics/namespace.js';

const RUNS = Number(process.env.BENCH_METRICS_RUNS ?? 100_000);
const SHAPES = Number(process.env.BENCH_METRICS_SHAPES ?? 20_000);
const SCRAPES = 20;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Stages `runs` runs of `true` spread evenly over `shapes` shapes (cpu=1, cpu=2, …), 500 shapes per call. */
async function stageSpread(client, runs, shapes) {
  const requests = Array.from({ length: shapes }, (_, i) => ({
    command: ['true'],
    resources: `cpu=${i + 1}`,
    repeat: Math.floor(runs / shapes) + (i < runs % shapes ? 1 : 0),
  }));
  for (let i = 0; i < requests.length; i += 500) await client.stage(requests.slice(i, i + 500));
}

/** Scrapes of a namespace: the median in ms, the text's bytes and its series. */
async function measure(clients, options) {
  let body = (await renderNamespaceMetrics(clients, options)).body;
  const [redis] = [...clients.values()].map((client) => client.redis);
  await redis.config('RESETSTAT');
  const times = [];
  for (let i = 0; i < SCRAPES; i++) {
    const start = performance.now();
    body = (await renderNamespaceMetrics(clients, options)).body;
    times.push(performance.now() - start);
  }
  // How long the read-only script calls of a scrape hold Redis, on average (readMetrics, and countRunStatuses's parts).
  const read = /cmdstat_evalsha_ro:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(await redis.info('commandstats'));
  const series = body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  const staged = series.filter((line) => line.startsWith('fitq_staged_runs{'));
  const stagedSum = staged.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  const scriptMs = read ? Number(read[1]) / 1000 : Number.NaN;
  return { ms: median(times), scriptMs, bytes: Buffer.byteLength(body), series: series.length, stagedSeries: staged.length, stagedSum };
}

/** One namespace of `shapes` shapes: stages, scrapes as /metrics does (and showing every shape), empties it. */
async function scrapeCase(url, queue, shapes) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    await stageSpread(client, RUNS, shapes);
    const clients = new Map([[queue, client]]);
    const bounded = await measure(clients, {});
    const every = await measure(clients, { shapes });
    await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
    return { bounded, every };
  } finally {
    await client.close();
  }
}

/** The longest script call (µs) while `act` runs, by Redis's SLOWLOG (calls over 100 µs). */
async function longestScriptCall(redis, act) {
  const [, threshold] = await redis.config('GET', 'slowlog-log-slower-than');
  const [, length] = await redis.config('GET', 'slowlog-max-len');
  await redis.config('SET', 'slowlog-log-slower-than', '100', 'slowlog-max-len', '100000');
  await redis.slowlog('RESET');
  try {
    await act();
    const entries = await redis.slowlog('GET', 100000);
    return Math.max(0, ...entries.filter((entry) => /^evalsha/i.test(String(entry[3][0]))).map((entry) => Number(entry[2])));
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', threshold, 'slowlog-max-len', length);
  }
}

/** RUNS runs staged in one shape and canceled, all kept (the default retention keeps 10,000): a scrape and its longest script call. */
async function endedCase(url, queue) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    await client.setRetention({ keepFailed: null, keepAgeMs: null });
    await stageSpread(client, RUNS, 1);
    const ids = await client.redis.zrange(client.keys.ids, 0, -1);
    for (let i = 0; i < ids.length; i += 10_000) await client.cancelRuns(ids.slice(i, i + 10_000));
    const clients = new Map([[queue, client]]);
    let scrape;
    const longestUs = await longestScriptCall(client.redis, async () => (scrape = await measure(clients, {})));
    await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
    return { ...scrape, longestMs: longestUs / 1000 };
  } finally {
    await client.close();
  }
}

/** The case and its baseline, on the Redis at `url`. */
export async function metricsScrape(url, newQueue) {
  const one = await scrapeCase(url, newQueue(), 1);
  const many = await scrapeCase(url, newQueue(), SHAPES);
  const ended = await endedCase(url, newQueue());
  return { runs: RUNS, shapes: SHAPES, one, many, ended };
}
