/**
 * The field table drives every form of a run (model/run-fields.ts): these
 * pin what it must keep exactly as fitq has always written it, with texts
 * and signatures made by fitq before the table existed: signatures made
 * then still verify, and job data written then reads back the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dataFields, parseRunFields, runDataJson, runFields } from '../../src/model/run-data.js';
import { decodeRun } from '../../src/model/run-decode.js';
import { fieldsOf, RUN_FIELDS } from '../../src/model/run-fields.js';
import { parseDemands, parseStoredResources } from '../../src/resources/spec.js';
import { canonicalRunPayload, SIGNED_FIELDS, SIGNED_IF_PRESENT, signRun, verifyRun } from '../../src/security/signing.js';

const SECRET = Buffer.from('correct horse battery staple');

/** A run with every data field, its job data and flat fields as fitq wrote them before the table. */
const FULL_FIELDS: Record<string, string> = {
  command: '["python","train.py"]', shell: '1', cwd: '/home/me', env: '{"SEED":"1"}', labels: '{"team":"v"}', resources: 'gpu=1 mem=8000000000',
  requires: 'gpu=1 mem=8G', gpus: '0,1', retries: '2', timeLimit: '3600000', timeSignal: 'SIGUSR1@2m', signature: 'v1:ab', notify: 'http://h/',
  lifecycle: '{"hold":true,"after":[{"kind":"ok","runs":["x"]}],"retry":{"limit":3}}', arrayIndex: '4', params: '{"lr":"0.1"}',
  output: '{"stdout":"/tmp/o.log"}',
};
const FULL_DATA =
  '{"command":["python","train.py"],"shell":true,"cwd":"/home/me","env":{"SEED":"1"},"labels":{"team":"v"},"resources":"gpu=1 mem=8000000000",' +
  '"priority":5,"requires":"gpu=1 mem=8G","gpus":"0,1","retries":2,"timeLimit":3600000,"timeSignal":"SIGUSR1@2m","signature":"v1:ab",' +
  '"notify":"http://h/","hold":true,"after":[{"kind":"ok","runs":["x"]}],"retry":{"limit":3},"arrayIndex":4,"params":{"lr":"0.1"},' +
  '"output":{"stdout":"/tmp/o.log"}}';

describe('the run field table', () => {
  it('signs the fields it always signed, in their order, and those it signs when present', () => {
    expect(SIGNED_FIELDS).toEqual(['command', 'shell', 'cwd', 'env', 'resources', 'gpus', 'retries', 'priority']);
    expect(SIGNED_IF_PRESENT).toEqual(['timeLimit', 'timeSignal', 'output', 'preempt', 'preemptAfter', 'user', 'stagedFrom']);
    // What a run is (its data), and who staged it: written once, by the stage script, beside the data.
    const writtenAtStage = new Set(['user', 'stagedFrom']);
    for (const name of [...SIGNED_FIELDS, ...SIGNED_IF_PRESENT]) {
      expect(RUN_FIELDS[name as keyof typeof RUN_FIELDS].home).toBe(writtenAtStage.has(name) ? 'hash' : 'data');
    }
  });

  it('signatures made before the table verify, byte for byte the same payload', () => {
    const before: { run: { namespace: string; runId: string; fields: Record<string, string> }; signature: string; payload: string }[] = [
      {
        run: {
          namespace: 'fitq:{default}:', runId: 'abc123',
          fields: { command: '["python","train.py"]', shell: '0', cwd: '/home/me', env: '{"SEED":"1"}', labels: '{}', resources: 'gpu=1 mem=8000000000', gpus: '0', retries: '2', priority: '5' },
        },
        signature: 'v1:4f4aaaa2bc5a04ceb924cd3c1027c4f921ab9ee6f262f903402d2eb859b4d1fd',
        payload: '["fitq-run-v1","fitq:{default}:","abc123","[\\"python\\",\\"train.py\\"]","0","/home/me","{\\"SEED\\":\\"1\\"}","gpu=1 mem=8000000000","0","2","5"]',
      },
      {
        run: {
          namespace: 'fitq:{q}:', runId: 'r2',
          fields: {
            command: '["sh -c true"]', shell: '1', cwd: '/', env: '{}', labels: '{"a":"b"}', resources: '', priority: '-3', timeLimit: '3600000',
            timeSignal: 'SIGUSR1@2m', output: '{"stdout":"/tmp/o.log"}', requires: 'x', notify: 'http://h/',
          },
        },
        signature: 'v1:ea995ec78445c8b9ceae19ab66d8e36a41d64b0bb64de79fa6f492eedc361a37',
        payload:
          '["fitq-run-v1","fitq:{q}:","r2","[\\"sh -c true\\"]","1","/","{}","",null,null,"-3","timeLimit","3600000","timeSignal","SIGUSR1@2m","output","{\\"stdout\\":\\"/tmp/o.log\\"}"]',
      },
    ];
    for (const { run, signature, payload } of before) {
      expect(canonicalRunPayload(run)).toBe(payload);
      expect(signRun(SECRET, run)).toBe(signature);
      expect(verifyRun(SECRET, { ...run, fields: { ...run.fields, signature } })).toEqual({ ok: true });
      // Read back from the job data it is stored as, it still verifies.
      const stored = runFields(run.runId, { data: runDataJson(run.fields, Number(run.fields.priority)), status: 'staged' });
      expect(verifyRun(SECRET, { ...run, fields: { ...stored, signature } })).toEqual({ ok: true });
    }
  });

  it('writes job data byte for byte as before, and reads data written before as it was', () => {
    expect(runDataJson(FULL_FIELDS, 5)).toBe(FULL_DATA);
    expect(dataFields(FULL_DATA)).toEqual({ ...FULL_FIELDS, priority: '5' });
    expect(Object.keys(dataFields(FULL_DATA))).toEqual(['command', 'shell', 'cwd', 'env', 'labels', 'resources', 'priority', ...Object.keys(FULL_FIELDS).slice(6)]);
    expect(dataFields('{"command":["true"]}')).toEqual({ command: '["true"]', shell: '0', cwd: '', env: '{}', labels: '{}', resources: '', priority: '0' });
    // Written by the build that stored every default: read as they were.
    const OLD_DEFAULTS = '{"command":["true"],"shell":false,"cwd":"","env":{},"labels":{},"resources":"cpu=1","priority":0}';
    expect(dataFields(OLD_DEFAULTS)).toEqual({ command: '["true"]', shell: '0', cwd: '', env: '{}', labels: '{}', resources: 'cpu=1', priority: '0' });
    expect(dataFields('{"cmd":"true"}')).toEqual({});
    expect(dataFields('not json')).toEqual({});
  });

  it('leaves a field at its default out of the data, and reads it back as the default', () => {
    const fields = { command: '["true"]', shell: '0', cwd: '', env: '{}', labels: '{}', resources: 'cpu=1' };
    const data = runDataJson(fields, 0);
    expect(data).toBe('{"command":["true"],"resources":"cpu=1"}');
    expect(dataFields(data)).toEqual({ ...fields, priority: '0' });
    // Short enough to keep a job hash a listpack (hash-max-listpack-value 64).
    expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
    // `command` marks a fitq run's data: written even when empty.
    expect(runDataJson({ command: '[]' }, 0)).toBe('{"command":[]}');
    expect(dataFields('{"command":[]}')).toMatchObject({ command: '[]', priority: '0' });
    // Only defaults are left out: a value beside one is written.
    expect(runDataJson({ ...fields, shell: '1', cwd: '/', env: '{"A":"1"}', labels: '{"a":"b"}' }, -3)).toBe(
      '{"command":["true"],"shell":true,"cwd":"/","env":{"A":"1"},"labels":{"a":"b"},"resources":"cpu=1","priority":-3}',
    );
  });

  it('signatures made over data with every default still verify over the data without them, and the reverse', () => {
    const run = { namespace: 'fitq:{default}:', runId: 'a1b2c3d4e5f6', fields: { command: '["true"]', shell: '0', cwd: '', env: '{}', labels: '{}', resources: 'cpu=1', priority: '0' } };
    const signature = signRun(SECRET, run);
    const oldData = '{"command":["true"],"shell":false,"cwd":"","env":{},"labels":{},"resources":"cpu=1","priority":0}';
    for (const data of [oldData, runDataJson(run.fields, 0)]) {
      const stored = runFields(run.runId, { data, status: 'staged' });
      expect(verifyRun(SECRET, { ...run, fields: { ...stored, signature } })).toEqual({ ok: true });
    }
    expect(dataFields(oldData)).toEqual(dataFields(runDataJson(run.fields, 0)));
  });

  it('round-trips any flat fields through the job data', () => {
    const text = fc.string({ maxLength: 12 });
    const flat = fc.record(
      {
        command: fc.array(text, { maxLength: 3 }).map((list) => JSON.stringify(list)),
        shell: fc.constantFrom('0', '1'),
        cwd: text,
        env: fc.dictionary(fc.stringMatching(/^[A-Z]{1,4}$/), text).map((env) => JSON.stringify(env)),
        labels: fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), text).map((labels) => JSON.stringify(labels)),
        resources: text,
        priority: fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
        requires: text,
        gpus: fc.constantFrom('0', '0,1', '3'),
        retries: fc.integer({ min: 0, max: 100 }).map(String),
        timeLimit: fc.integer({ min: 1, max: 2 ** 40 }).map(String),
        timeSignal: text,
        notify: text,
        arrayIndex: fc.nat().map(String),
        output: text.map((stdout) => JSON.stringify({ stdout })),
      },
      { requiredKeys: ['command', 'shell', 'cwd', 'env', 'labels', 'resources', 'priority'] },
    );
    fc.assert(
      fc.property(flat, (fields) => {
        expect(dataFields(runDataJson(fields, Number(fields.priority)))).toEqual(fields);
      }),
    );
  });

  it('decodes a run once: its record, and the demands it was decoded with', () => {
    const hash = { data: FULL_DATA, status: 'running', runLimit: '60000', deadline: '99', processedOn: '10', timestamp: '5', seq: '7', epoch: '2', devices: '1' };
    const fields = runFields('abc', hash);
    const decoded = decodeRun(fields);
    expect(decoded.run).toEqual(parseRunFields(fields));
    expect(decoded.demands).toEqual(parseStoredResources('gpu=1 mem=8000000000'));
    expect(decoded.run).toMatchObject({ id: 'abc', status: 'running', requires: 'gpu=1 mem=8G', timeLimit: 60000, deadline: 99, epoch: 2, devices: [1], pinnedGpus: [0, 1] });
    // Given the demands as parsed where they were typed, the typed text is taken as it is.
    const typed = parseDemands(['gpu=1 mem=8G']);
    expect(decodeRun(fields, { demands: decoded.demands, typed }).run).toEqual(decoded.run);
    expect(decodeRun({ ...fields, requires: 'gpu=2' }, { demands: decoded.demands, typed }).run.requires).toBe('gpu=1 mem=8G');
    // Every property, in the order `fitq runs --json` has always shown them.
    const everything = decodeRun({
      ...runFields('abc', { data: FULL_DATA, status: 'running', runLimit: '60000', deadline: '99', processedOn: '10', finishedOn: '20', timestamp: '5', seq: '7' }),
      worker: 'w', exitCode: '0', signal: 'SIGTERM', reason: 'r', epoch: '2', devices: '1', restaged: '1', restagedReason: 'x', beginAt: '3',
      waitDeps: '1', depsNever: 'n', failures: '1', restarted: '1', canceledFor: 'c', array: 'a',
      lifecycle: '{"after":[{"kind":"ok","runs":["x"]}],"keepIfDependencyFails":true,"retry":{"limit":3}}',
    }).run;
    expect(Object.keys(everything)).toEqual([
      'id', 'status', 'command', 'shell', 'cwd', 'env', 'resources', 'requires', 'priority', 'labels', 'stagedAt', 'seq', 'startedAt', 'endedAt',
      'worker', 'exitCode', 'signal', 'reason', 'epoch', 'devices', 'pinnedGpus', 'retries', 'restaged', 'restagedReason', 'notify', 'timeLimit',
      'deadline', 'timeSignal', 'beginAt', 'after', 'waitingForDependencies', 'dependencyNever', 'keepIfDependencyFails', 'retryOnFailure',
      'failures', 'restarted', 'canceledFor', 'array', 'arrayIndex', 'params', 'output',
    ]);
    // The hash's own fields are the scripts', never the data's.
    for (const name of ['status', 'epoch', 'reserved', 'pooled', 'devices', 'deadline', 'runLimit']) expect(fieldsOf('hash')).toContain(name);
  });
});
