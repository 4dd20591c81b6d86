import { describe, expect, it } from 'vitest';
import { connectClient, newQueue, stagedShape } from '../support/fitq.js';
import { prepareRuns, runShape } from '../../src/model/stage.js';

describe('staging', () => {
  it('stages a large batch, split across script calls, in order', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 5000 });
    expect(runs).toHaveLength(5000);
    const seqs = runs.map((run) => run.seq);
    expect(seqs).toEqual(Array.from({ length: 5000 }, (_, i) => seqs[0]! + i));
    const stored = await client.listRuns();
    expect(stored.map((run) => run.id)).toEqual(runs.map((run) => run.id));
    expect(await client.redis.zcard(client.keys.staged(stagedShape('cpu=1')))).toBe(5000);
  });

  it('stages nothing when one run id of a batch is taken', async () => {
    const client = await connectClient(newQueue());
    await client.stage({ command: ['true'], runId: 'taken' });
    await expect(client.stage([{ command: ['true'], runId: 'fresh' }, { command: ['true'], runId: 'taken' }])).rejects.toThrow(
      "run id 'taken' is already taken",
    );
    expect((await client.listRuns()).map((run) => run.id)).toEqual(['taken']);
  });

  it('keeps namespaces independent', async () => {
    const a = await connectClient(newQueue());
    const b = await connectClient(newQueue());
    await a.stage({ command: ['true'], runId: 'same-id' });
    await b.stage({ command: ['false'], runId: 'same-id' });
    expect((await a.getRun('same-id')).command).toEqual(['true']);
    expect((await b.getRun('same-id')).command).toEqual(['false']);
    expect(a.keys.run('same-id')).toMatch(/^[\w-]+:\{t[0-9a-f]+\}:runs:same-id$/);
  });

  it('stores the demands as typed only when they read otherwise than their amounts shown', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage([
      { command: ['true'], resources: 'cpu=1 gpu=2', runId: 'as-shown' },
      { command: ['true'], resources: 'gpu=2 cpu=1', runId: 'reordered' },
      { command: ['true'], resources: 'mem=0.5G', runId: 'units' },
    ]);
    const data = async (id: string) => JSON.parse((await client.redis.hget(client.keys.run(id), 'data'))!) as Record<string, unknown>;
    expect(await data('as-shown')).not.toHaveProperty('requires');
    expect(await data('reordered')).toMatchObject({ requires: 'gpu=2 cpu=1' });
    expect(await data('units')).toMatchObject({ requires: 'mem=0.5G', resources: 'mem=500000000' });
    const shown = ['cpu=1 gpu=2', 'gpu=2 cpu=1', 'mem=0.5G'];
    expect(runs.map((run) => run.requires)).toEqual(shown);
    expect((await client.listRuns()).map((run) => run.requires)).toEqual(shown);
  });
});

describe('strings that are not text', () => {
  // A lone surrogate would reach the run as U+FFFD (Node encodes it so): refused, shown escaped.
  it.each([
    [{ command: ['cat', 'caf\uDCE9'] }, "invalid command argument 'caf\\udce9': holds a lone UTF-16 surrogate, which is not text"],
    [{ command: ['true'], env: { NAME: 'x\uD800' } }, "invalid environment variable 'NAME' value 'x\\ud800': holds a lone UTF-16 surrogate, which is not text"],
    [{ command: ['true'], labels: { team: '\uDFFFa' } }, "invalid label 'team' value '\\udfffa': holds a lone UTF-16 surrogate, which is not text"],
    [{ command: ['true'], cwd: '/tmp/\uD83D' }, "invalid --cwd '/tmp/\\ud83d': holds a lone UTF-16 surrogate, which is not text"],
  ])('refuses a lone surrogate (%#) and stages nothing', async (request, message) => {
    const client = await connectClient(newQueue());
    await expect(client.stage(request)).rejects.toThrow(message);
    expect(await client.listRuns()).toEqual([]);
  });

  it('takes characters beyond U+FFFF (surrogate pairs)', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage({ command: ['echo', '\u{1F600}'], labels: { mood: '\u{1F600}' } });
    expect(await client.getRun(runs[0]!.id)).toMatchObject({ command: ['echo', '\u{1F600}'], labels: { mood: '\u{1F600}' } });
  });
});

describe('waiting for a run to end', () => {
  it('gives up after the time given with a TimeoutError (exit 1), not a usage error', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage({ command: ['true'], resources: 'never=1' });
    const waited = client.waitForEnd(runs[0]!.id, 1000);
    await expect(waited).rejects.toThrow(`run '${runs[0]!.id}' did not end within 1 s`);
    await expect(waited).rejects.toMatchObject({ name: 'TimeoutError', exitCode: 1 });
  });
});

describe('time limits of staged runs', () => {
  it('are stored in ms with their signal, and give the run a shape of their own', () => {
    const [run] = prepareRuns({ command: ['true'], resources: 'gpu=1', timeLimit: '2h30m', timeSignal: 'usr1@2m' });
    expect(run!.fields).toMatchObject({ timeLimit: '9000000', timeSignal: 'SIGUSR1@2m' });
    expect(runShape(run!)).toBe('gpu=1;t=9000000');
    const [pinned] = prepareRuns({ command: ['true'], resources: 'gpu=1', gpus: '2', timeLimit: 60_000, timeSignal: { signal: 'SIGTERM', beforeMs: 0 } });
    expect(runShape(pinned!)).toBe('gpu=1;gpus=2;t=60000');
    expect(pinned!.fields.timeSignal).toBe('SIGTERM');
    expect(runShape(prepareRuns({ command: ['true'] })[0]!)).toBe('none');
  });

  it.each([
    [{ timeLimit: 1.5 }, "expected --time-limit to be a whole number of ms up to 365 days, got '1.5'"],
    [{ timeLimit: 0 }, "got '0'"],
    [{ timeLimit: 'soon' }, "got 'soon'"],
    [{ timeSignal: 'USR1' }, "--time-signal 'SIGUSR1' needs a --time-limit"],
    [{ timeLimit: '1h', timeSignal: 'USR1@1h' }, "--time-signal 'SIGUSR1@1h' would come at or before the run's start: its time limit is 1h"],
    [{ timeLimit: '1h', timeSignal: { signal: 'SIGKILL', beforeMs: 0 } }, "got 'SIGKILL'"],
  ])('%j is refused, quoted', (request, message) => {
    expect(() => prepareRuns({ command: ['true'], ...request })).toThrow(message);
  });
});
