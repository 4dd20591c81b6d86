import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatResources } from '../../src/resources/spec.js';
import { resolveWorkerResources } from '../../src/worker/resource-sources.js';
import { fitq, newQueue, parseJsonLog } from '../support/fitq.js';

function configFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fitq-conf-')), 'config.json');
  writeFileSync(path, content);
  return path;
}

describe('worker resources from flags, environment and config file', () => {
  it('merges name by name: flags over environment over file', () => {
    const env = {
      FITQ_CONFIG: configFile('{"worker": {"resources": {"gpu": 2, "mem": "64G", "disk": "1T"}}}'),
      FITQ_RESOURCES: 'mem=32G cpu=8',
      FITQ_RESOURCES__GPU: '1',
    };
    const { resources, sources } = resolveWorkerResources(['cpu=4'], env);
    expect(formatResources(resources)).toBe('cpu=4 disk=1000000000000 gpu=1 mem=32000000000');
    expect(Object.fromEntries(sources)).toEqual({
      cpu: '-r/--resources',
      disk: `config file ${env.FITQ_CONFIG}`,
      gpu: 'FITQ_RESOURCES__GPU',
      mem: 'FITQ_RESOURCES',
    });
  });

  it('lets a zero in a higher layer remove a resource of a lower one', () => {
    const env = { FITQ_CONFIG: configFile('{"worker": {"resources": {"gpu": 2, "mem": "8G"}}}'), FITQ_RESOURCES__MEM: '0' };
    expect(formatResources(resolveWorkerResources(['gpu=0'], env).resources)).toBe('');
  });

  it('reads the default config file under XDG_CONFIG_HOME, as a spec string too', () => {
    const home = mkdtempSync(join(tmpdir(), 'fitq-xdg-'));
    const dir = join(home, 'fitq');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{"worker": {"resources": "license=1 gpu=0.5"}}');
    expect(formatResources(resolveWorkerResources([], { XDG_CONFIG_HOME: home }).resources)).toBe('gpu=0.5 license=1');
    expect(resolveWorkerResources([], { XDG_CONFIG_HOME: join(home, 'none') }).resources.size).toBe(0);
  });

  it.each([
    [{ FITQ_RESOURCES: 'gpu' }, "invalid resource spec 'gpu': expected NAME=VALUE (from FITQ_RESOURCES)"],
    [{ FITQ_RESOURCES__GPU: '-1' }, "invalid resource spec 'gpu=-1': value must not be negative (from FITQ_RESOURCES__GPU)"],
    [{ FITQ_RESOURCES__GPU: '1 cpu=64' }, "invalid resource spec 'gpu=1 cpu=64': expected one amount (from FITQ_RESOURCES__GPU)"],
    [{ FITQ_CONFIG: '/no/such/fitq.json' }, "config file '/no/such/fitq.json' (FITQ_CONFIG) does not exist"],
    [{ FITQ_CONFIG: configFile('{nope') }, 'is not valid JSON'],
    [{ FITQ_CONFIG: configFile('{"worker": {"resources": {"a": "x"}}}') }, "invalid resource spec 'a=x'"],
  ])('refuses bad input %j, saying where it came from', (env, message) => {
    expect(() => resolveWorkerResources([], env)).toThrow(message);
  });

  it('fitq worker uses them and logs each source at debug level', async () => {
    const queue = newQueue();
    const env = {
      FITQ_CONFIG: configFile('{"worker": {"resources": {"gpu": 2}}}'),
      FITQ_RESOURCES__MEM: '8G',
      FITQ_LOG_LEVEL: 'debug',
    };
    const result = await fitq(['worker', '--run-once', '--log-format', 'json', '-r', 'cpu=1'], { queue, env });
    expect(result.exitCode, result.stderr).toBe(0);
    const log = parseJsonLog(result.stdout).map((entry) => String(entry.msg));
    expect(log).toContain('Worker resources: cpu=1 gpu=2 mem=8G');
    expect(log).toContain('Resource cpu=1 from -r/--resources');
    expect(log).toContain(`Resource gpu=2 from config file ${env.FITQ_CONFIG}`);
    expect(log).toContain('Resource mem=8G from FITQ_RESOURCES__MEM');
    const bad = await fitq(['worker', '--run-once'], { queue, env: { FITQ_RESOURCES: 'x' } });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim()).toBe("Error: invalid resource spec 'x': expected NAME=VALUE (from FITQ_RESOURCES)");
  });
});
