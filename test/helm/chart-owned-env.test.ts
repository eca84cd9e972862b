// The extraEnv guard listed only some of the variables the chart sets: DISPATCH_REDIS_PASSWORD,
// DISPATCH_AUTH_TOKENS_FILE, OTEL_TRACES_EXPORTER, POD_NAME, the DISPATCH_REDIS_SENTINEL_* ones
// and TMPDIR got through, and the kubelet took extraEnv's (the later entry): a plaintext Redis
// password, another tokens file, traces on. The guard now refuses every name the Deployment
// renders, so a variable added to the chart is refused without a list to keep up.
import { join } from 'node:path';
import { containerOf, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

// Every feature that adds a variable: Sentinel with its own credentials, mutual TLS, auth,
// DISPATCH_INSECURE, metrics, tracing with a sampler argument, a memory limit (NODE_OPTIONS).
const everything = () => [
  join(__dirname, 'values-sentinel-tls.yaml'),
  valuesFile('redis: {sentinel: {auth: {username: dispatch}}}\nserver: {insecure: true}'),
];

const chartNames = (): string[] => containerOf(renderObjects(everything())).env.map((e: { name: string }) => e.name);

it('renders every variable the guard must cover', () => {
  expect(chartNames()).toEqual(expect.arrayContaining([
    'POD_NAME', 'POD_NAMESPACE', 'TMPDIR', 'DISPATCH_REDIS_PASSWORD', 'DISPATCH_REDIS_SENTINEL_PASSWORD',
    'DISPATCH_REDIS_SENTINEL_USERNAME', 'DISPATCH_AUTH_TOKENS_FILE', 'DISPATCH_INSECURE', 'DISPATCH_TLS_CA', 'OTEL_TRACES_EXPORTER', 'OTEL_TRACES_SAMPLER_ARG',
  ]));
});

it('refuses an extraEnv entry for each variable the chart renders (NODE_OPTIONS is merged instead)', () => {
  const names = chartNames().filter((n) => n !== 'NODE_OPTIONS');
  const refused = names.filter((name) => {
    const r = render([...everything(), valuesFile(`extraEnv: [{name: ${name}, value: x}]`)]);
    return r.status !== 0 && r.stderr.includes(`extraEnv must not set ${name}: the chart sets it from `);
  });
  expect(refused).toEqual(names);
});

it.each([
  ['DISPATCH_REDIS_PASSWORD', 'redis.existingSecret'],
  ['DISPATCH_AUTH_TOKENS_FILE', 'auth.enabled, auth.existingSecret and auth.secretKey'],
  ['OTEL_TRACES_EXPORTER', 'tracing.enabled'],
  ['POD_NAME', "the pod's own metadata.name"],
  ['TMPDIR', 'tmpDir'],
  ['DISPATCH_REDIS_SENTINEL_PASSWORD', 'redis.sentinel.auth'],
])('with the defaults, refuses %s naming the value to set instead', (name, from) => {
  const r = render([valuesFile(`extraEnv: [{name: ${name}, value: x}]`)]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain(`extraEnv must not set ${name}: the chart sets it from ${from}`);
});

it('still takes a NODE_OPTIONS to merge, and variables the chart never sets', () => {
  const env = containerOf(renderObjects([valuesFile('extraEnv: [{name: NODE_OPTIONS, value: --enable-source-maps}, {name: OTEL_EXPORTER_OTLP_HEADERS, value: "a=b"}]')])).env;
  expect(env.find((e: { name: string }) => e.name === 'NODE_OPTIONS').value).toBe('--max-old-space-size=332 --enable-source-maps');
  expect(env.find((e: { name: string }) => e.name === 'OTEL_EXPORTER_OTLP_HEADERS').value).toBe('a=b');
});
