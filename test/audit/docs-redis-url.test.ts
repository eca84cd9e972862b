import { parseDaemonOptions } from '../../src/cli/dispatchd-options';
import { parseRedisUrl } from '../../src/store/redis/redis-url';

// docs/redis.md: "A bad URL stops dispatchd at start with the reason and these forms." A Sentinel
// master name with a bad % escape (`/my%master`) threw a bare URIError instead: dispatchd said
// `--redis: URI malformed`, naming neither the problem nor the accepted forms.

const FORMS = '(expected redis://[:password@]host:port/db, redis-sentinel://';

test('a Sentinel master name that is not percent-encoded is a bad Redis URL, with its reason and the forms', () => {
  expect(() => parseRedisUrl('redis-sentinel://s1:26379/my%master', {})).toThrow(`bad Redis URL "redis-sentinel://s1:26379/my%master": the master name "my%master" is not percent-encoded (write % as %25) ${FORMS}`);
  expect(() => parseDaemonOptions(['--redis', 'redis-sentinel://:pw@s1:26379/50%off'], {})).toThrow(/^--redis: bad Redis URL "redis-sentinel:\/\/\*\*\*@s1:26379\/50%off": the master name "50%off" is not percent-encoded/);
  expect(() => parseDaemonOptions([], { DISPATCH_REDIS_URL: 'redis-sentinel://s1/m%' })).toThrow(`DISPATCH_REDIS_URL: bad Redis URL "redis-sentinel://s1/m%": the master name "m%" is not percent-encoded`);
  // An encoded one still decodes.
  expect(parseRedisUrl('redis-sentinel://s1/my%25master', {})).toMatchObject({ mode: 'sentinel', name: 'my%master' });
});
