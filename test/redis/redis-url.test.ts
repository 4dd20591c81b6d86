import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { describeTarget, isTlsUrl, parseRedisUrl, redactRedisUrl } from '../../src/redis/redis-url.js';

const noEnv = {};

describe('Redis URLs', () => {
  it('reads a Sentinel URL: hosts with default ports, master, db, logins from the URL and the environment', () => {
    expect(parseRedisUrl('redis+sentinel://alice:s%40cret@h1:26380,h2,[::1]:26382/my%20master/3?sentinel_password=sp', noEnv)).toEqual({
      kind: 'sentinel',
      tls: false,
      sentinels: [
        { host: 'h1', port: 26380 },
        { host: 'h2', port: 26379 },
        { host: '::1', port: 26382 },
      ],
      masterName: 'my master',
      db: 3,
      username: 'alice',
      password: 's@cret',
      sentinelPassword: 'sp',
    });
    const fromEnv = parseRedisUrl('rediss+sentinel://:pw@h1/mymaster', { FITQ_REDIS_SENTINEL_USERNAME: 'su', FITQ_REDIS_SENTINEL_PASSWORD: 'sp' });
    expect(fromEnv).toMatchObject({ kind: 'sentinel', tls: true, password: 'pw', db: 0, sentinelUsername: 'su', sentinelPassword: 'sp' });
    expect(fromEnv).not.toHaveProperty('username');
    // The URL wins over the environment.
    expect(parseRedisUrl('redis+sentinel://h1/m?sentinel_password=url', { FITQ_REDIS_SENTINEL_PASSWORD: 'env' })).toMatchObject({ sentinelPassword: 'url' });
  });

  it('reads a Cluster URL, in any case, with db 0 allowed', () => {
    expect(parseRedisUrl('REDISS+CLUSTER://u:p@10.0.0.1:7000,10.0.0.2/0', noEnv)).toEqual({
      kind: 'cluster',
      tls: true,
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
      username: 'u',
      password: 'p',
    });
  });

  it('leaves redis:// and rediss:// to ioredis as they are', () => {
    expect(parseRedisUrl(' redis://:pw@127.0.0.1:6380/2 ', noEnv)).toEqual({ kind: 'standalone', tls: false, url: 'redis://:pw@127.0.0.1:6380/2' });
    expect(isTlsUrl('REDISS://h')).toBe(true);
    expect(isTlsUrl('rediss+cluster://h')).toBe(true);
    expect(isTlsUrl('redis+sentinel://h/m')).toBe(false);
  });

  it.each([
    ['http://h:6379', /must start with redis:\/\//],
    ['redis+sentinel://h1,h2', /names no master/],
    ['redis+sentinel://h1/', /names no master/],
    ['redis+sentinel:///m', /names no host/],
    ['redis+sentinel://h1,,h2/m', /'' is not a host/],
    ['redis+sentinel://h1:0/m', /'h1:0' has no valid port/],
    ['redis+sentinel://h1:70000/m', /'h1:70000' has no valid port/],
    ['redis+sentinel://h1:x/m', /'h1:x' is not a host or host:port/],
    ['redis+sentinel://h1/m/one', /'one' is not a database number/],
    ['redis+sentinel://h1/m/0/more', /unexpected '\/more'/],
    ['redis+sentinel://h1/m?password=x', /unknown parameter 'password'/],
    ['redis+sentinel://h1/m?sentinel_password=a&sentinel_password=b', /given twice/],
    ['redis+sentinel://h1/m%zz', /not valid percent-encoding/],
    ['redis+cluster://h1:7000/1', /only database 0, not '1'/],
    ['redis+cluster://h1:7000?name=x', /unknown parameter 'name' \(a cluster URL takes none\)/],
    ['redis+cluster://', /names no host/],
  ])('refuses %s in one line, quoting it', (url, reason) => {
    let error: unknown;
    try {
      parseRedisUrl(url, noEnv);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toContain(`invalid Redis URL '${redactRedisUrl(url)}'`);
    expect((error as Error).message).not.toContain('\n');
  });

  it('hides every password in what it shows: the login, ?password= and ?sentinel_password=', () => {
    const url = 'redis+sentinel://alice:topsecret@h1,h2/m?sentinel_username=s&sentinel_password=sentinelsecret';
    expect(redactRedisUrl(url)).toBe('redis+sentinel://alice:***@h1,h2/m?sentinel_username=s&sentinel_password=***');
    expect(redactRedisUrl('redis://:pw@h:1/0?password=pw2')).toBe('redis://:***@h:1/0?password=***');
    expect(redactRedisUrl('rediss+cluster://u:p@a:1,b:2')).toBe('rediss+cluster://u:***@a:1,b:2');
    // A password holding @ or : is hidden whole.
    expect(redactRedisUrl('redis://:s3cr@t:p@ss@127.0.0.1:1')).toBe('redis://:***@127.0.0.1:1');
    expect(redactRedisUrl('redis+sentinel://u:a@b@h1,h2/m')).toBe('redis+sentinel://u:***@h1,h2/m');
    expect(redactRedisUrl('redis://127.0.0.1:6379/0')).toBe('redis://127.0.0.1:6379/0');
    let refused = '';
    try {
      parseRedisUrl('redis+sentinel://alice:topsecret@h1/m?sentinel_password=sentinelsecret&x=1', noEnv);
    } catch (error) {
      refused = (error as Error).message;
    }
    expect(refused).toMatch(/unknown parameter 'x'/);
    expect(refused).not.toMatch(/topsecret|sentinelsecret/);
  });

  it('describes where Redis is without a password', () => {
    expect(describeTarget(parseRedisUrl('redis+sentinel://u:pw@h1,h2:1/mymaster', noEnv))).toBe("sentinels h1:26379,h2:1 (master 'mymaster')");
    expect(describeTarget(parseRedisUrl('redis+cluster://u:pw@[::1]:7000', noEnv))).toBe('cluster [::1]:7000');
    expect(describeTarget(parseRedisUrl('redis://u:pw@h:1', noEnv))).toBe('redis://u:***@h:1');
  });
});
