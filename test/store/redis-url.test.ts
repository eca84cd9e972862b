import { parseRedisUrl } from '../../src/store/redis';

const env = {};

test('standalone URLs: host, port, database, TLS and credentials', () => {
  expect(parseRedisUrl('redis://localhost', env)).toEqual({ mode: 'standalone', address: { host: 'localhost', port: 6379 }, db: 0, tls: false });
  expect(parseRedisUrl('redis://:s3cr%40t@redis-master:6380/2', env)).toEqual({ mode: 'standalone', address: { host: 'redis-master', port: 6380 }, db: 2, tls: false, password: 's3cr@t' });
  expect(parseRedisUrl('rediss://app:pw@cache.example:6390', env)).toEqual({ mode: 'standalone', address: { host: 'cache.example', port: 6390 }, db: 0, tls: true, username: 'app', password: 'pw' });
  expect(parseRedisUrl('redis://[::1]:7000/1', env)).toMatchObject({ address: { host: '::1', port: 7000 }, db: 1 });
});

test('sentinel and cluster URLs name several hosts', () => {
  expect(parseRedisUrl('redis-sentinel://:pw@s1:26379,s2,s3:26380/mymaster', env)).toEqual({
    mode: 'sentinel',
    sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }, { host: 's3', port: 26380 }],
    tls: false,
    name: 'mymaster',
    password: 'pw',
  });
  expect(parseRedisUrl('redis-cluster://10.0.0.1:6379,10.0.0.2:6379', env)).toEqual({ mode: 'cluster', nodes: [{ host: '10.0.0.1', port: 6379 }, { host: '10.0.0.2', port: 6379 }], tls: false });
});

test('the password comes from DISPATCH_REDIS_PASSWORD when the URL has none', () => {
  expect(parseRedisUrl('redis-cluster://n1:6379', { DISPATCH_REDIS_PASSWORD: 'from-env' })).toMatchObject({ password: 'from-env' });
  expect(parseRedisUrl('redis://:in-url@h:1', { DISPATCH_REDIS_PASSWORD: 'from-env' })).toMatchObject({ password: 'in-url' });
});

test('bad URLs are refused with the reason and the accepted forms, never the password', () => {
  const forms = '(expected redis://[:password@]host:port/db, redis-sentinel://[:password@]host:26379,host:26379/MASTER or redis-cluster://[:password@]host:6379,host:6379; rediss://, rediss-sentinel:// and rediss-cluster:// over TLS)';
  expect(() => parseRedisUrl('http://h:1', env)).toThrow(`bad Redis URL "http://h:1": unknown scheme "http:" ${forms}`);
  expect(() => parseRedisUrl('redis://:hunter2@h:1/x', env)).toThrow(`bad Redis URL "redis://***@h:1/x": database "x" is not a number ${forms}`);
  expect(() => parseRedisUrl('redis://a:1,b:2', env)).toThrow('a standalone URL names one host (use redis-sentinel:// or redis-cluster:// for several)');
  expect(() => parseRedisUrl('redis-sentinel://s1:26379', env)).toThrow('the master name is missing (redis-sentinel://host:26379/MASTER)');
  expect(() => parseRedisUrl('redis-cluster://n1:6379/0', env)).toThrow('a cluster URL has no path (a cluster has only database 0)');
  expect(() => parseRedisUrl('redis://h:99999', env)).toThrow('port 99999 is out of range');
  expect(() => parseRedisUrl('redis://', env)).toThrow('no host');
});

test('a password holding an unencoded / or @, or a bad % escape, is refused naming no part of it', () => {
  // The user info was hidden only up to the first `/`: "s3cr/et" was printed whole. An `@` in the
  // password made its tail the host (`et@redis`), accepted. A bad escape threw a bare URIError.
  for (const url of ['redis://:s3cr/et@redis:6379/0', 'redis://:s3cr@et@redis:6379', 'redis://:50%off-s3cr@redis:6379', 'redis-sentinel://:p@ss@s1:26379/main']) {
    let message = '';
    try {
      parseRedisUrl(url, {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^bad Redis URL "redis(-sentinel)?:\/\/\*\*\*@/);
    expect(message).not.toMatch(/s3cr|et@|off|p@ss/);
  }
});

test('a scheme is case-insensitive, and only the four schemes are known', () => {
  // RFC 3986: `REDIS://` is `redis://` (it was "not a URL"). `constructor://` found Object's own
  // property and failed with a TypeError instead of naming the scheme.
  expect(parseRedisUrl('REDIS://h:1', env)).toEqual({ mode: 'standalone', address: { host: 'h', port: 1 }, db: 0, tls: false });
  expect(parseRedisUrl('Redis-Cluster://a:1,b:2', env)).toMatchObject({ mode: 'cluster', nodes: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }] });
  expect(parseRedisUrl('RedisS://h', env)).toMatchObject({ tls: true });
  for (const scheme of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'redis+tls']) {
    expect(() => parseRedisUrl(`${scheme}://h:1`, env)).toThrow(/^bad Redis URL ".*": (unknown scheme|not a URL)/);
  }
  expect(() => parseRedisUrl('constructor://h:1', env)).toThrow('unknown scheme "constructor:"');
});
