// redis.sentinel.auth: dispatch's credentials for the Sentinels themselves. A Sentinel with
// requirepass (Bitnami's default, auth.sentinel: true) answers nothing else, so without them the
// master is never found. test/redis/sentinel-auth.test.ts shows the server side with real processes.
import { join } from 'node:path';
import { envOf, problems, render, renderNotes, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const SENTINEL = 'redis: {mode: sentinel, sentinel: {hosts: ["s-0.data.svc:26379"]';
const sentinelValues = (rest: string) => valuesFile(`${SENTINEL}${rest}}`);

describe('redis.sentinel.auth', () => {
  it('useRedisPassword gives the Sentinels the Redis password (the Bitnami value set)', () => {
    const objects = renderObjects([join(__dirname, 'values-sentinel-tls.yaml')]);
    const env = envOf(objects);
    const ref = { secretKeyRef: { name: 'redis-auth', key: 'redis-password' } };
    expect(env.DISPATCH_REDIS_PASSWORD).toEqual(ref);
    expect(env.DISPATCH_REDIS_SENTINEL_PASSWORD).toEqual(ref);
    expect(env.DISPATCH_REDIS_SENTINEL_USERNAME).toBeUndefined();
    expect(problems(objects)).toEqual([]);
  });

  it('a separate Secret and key, and an ACL username', () => {
    const objects = renderObjects([
      sentinelValues(', auth: {existingSecret: sentinel-auth, existingSecretPasswordKey: "on", username: dispatch}}, existingSecret: redis-auth'),
    ]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_SENTINEL_PASSWORD).toEqual({ secretKeyRef: { name: 'sentinel-auth', key: 'on' } });
    expect(env.DISPATCH_REDIS_SENTINEL_USERNAME).toBe('dispatch');
    expect(env.DISPATCH_REDIS_PASSWORD).toEqual({ secretKeyRef: { name: 'redis-auth', key: 'redis-password' } });
    expect(problems(objects)).toEqual([]);
  });

  it.each([
    ['by default', `${SENTINEL}}, existingSecret: redis-auth}`],
    ['with `helm upgrade --reuse-values` from a chart without it', `${SENTINEL}, auth: null}, existingSecret: redis-auth}`],
    ['outside sentinel mode', 'redis: {sentinel: {auth: {useRedisPassword: true}}, existingSecret: redis-auth}'],
  ])('sets nothing %s', (_label, values) => {
    const env = envOf(renderObjects([valuesFile(values)]));
    expect(env.DISPATCH_REDIS_SENTINEL_PASSWORD).toBeUndefined();
    expect(env.DISPATCH_REDIS_SENTINEL_USERNAME).toBeUndefined();
  });

  it.each([
    ['both sources', ', auth: {useRedisPassword: true, existingSecret: s}}, existingSecret: redis-auth', /set useRedisPassword or existingSecret, not both/],
    ['the Redis password without one', ', auth: {useRedisPassword: true}}', /useRedisPassword needs the Redis password in redis.existingSecret/],
    ['a Secret without a key', ', auth: {existingSecret: s, existingSecretPasswordKey: ""}}', /redis.sentinel.auth.existingSecretPasswordKey is required/],
  ])('refuses %s', (_label, rest, message) => {
    const r = render([sentinelValues(rest)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });
});

it('NOTES warn when the Sentinels are asked without a password, and only then', () => {
  const warning = /dispatch asks the Sentinels without a password[^]*redis\.sentinel\.auth\.useRedisPassword/;
  expect(renderNotes([sentinelValues('}, existingSecret: redis-auth')])).toMatch(warning);
  expect(renderNotes([join(__dirname, 'values-sentinel-tls.yaml')])).not.toMatch(warning);
  expect(renderNotes([])).not.toMatch(warning);
});
