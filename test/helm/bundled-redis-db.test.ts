// The bundled Redis runs with Redis's default `databases 16` (its redis.conf does not raise it),
// so redis.standalone.db 16 or more names a database it does not have: dispatchd then refuses to
// start ("redis has no database 16 ... ERR DB index is out of range") and every pod crash-loops.
// The schema takes any whole number (an external Redis may have more databases); with the bundled
// Redis the chart must refuse it at render time.
import { envOf, render, renderObjects, REDIS, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

it('refuses redis.standalone.db 16 or more with the bundled Redis', () => {
  const r = render([valuesFile('redis: {standalone: {db: 16}}')]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('redis.standalone.db (16)');
});

it('takes db 15 with the bundled Redis, and any db with an external one', () => {
  expect(envOf(renderObjects([valuesFile('redis: {standalone: {db: 15}}')])).DISPATCH_REDIS_URL).toBe(`redis://${REDIS}:6379/15`);
  expect(envOf(renderObjects([valuesFile('redis: {standalone: {host: cache.data.svc, db: 40}}')])).DISPATCH_REDIS_URL).toBe('redis://cache.data.svc:6379/40');
});
