/** Which hosts the dashboard serves without a token. */
import { describe, expect, it } from 'vitest';
import { checkExposure, isLoopbackHost } from '../../src/dashboard/auth.js';

describe('isLoopbackHost', () => {
  it('takes 127.0.0.0/8, ::1 and localhost as loopback, nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.0.2.7', '10.0.0.1', 'example.org', 'localhost.example.org', '128.0.0.1', '::2']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses a host beyond this machine without a token, and an empty token anywhere', () => {
    expect(() => checkExposure('127.0.0.1', undefined)).not.toThrow();
    expect(() => checkExposure('example.org', 'tok')).not.toThrow();
    expect(() => checkExposure('example.org', undefined)).toThrow("refusing to serve the dashboard on --host 'example.org' without a token");
    expect(() => checkExposure('127.0.0.1', '')).toThrow('--token (or FITQ_DASHBOARD_TOKEN) is empty');
  });
});
