// extraEnv is rendered after the chart's own variables, and the kubelet takes the last of two
// entries with one name: an extraEnv DISPATCH_LISTEN (or DISPATCH_GRACE_MS, DISPATCH_CONFIG, ...)
// silently replaces the chart's, so the server no longer matches the probes, Services,
// NetworkPolicy, mounts or termination grace period the chart derived from its values (the API
// server only warns "hides previous definition"). server.extraArgs refuses the same settings as
// flags; extraEnv must refuse them as variables.
import { envOf, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

it.each([
  ['DISPATCH_LISTEN', '0.0.0.0:9000', 'server.port'],
  ['DISPATCH_GRACE_MS', '120000', 'shutdown.graceMs'],
  ['DISPATCH_CONFIG', '/etc/other.yaml', 'config'],
  ['DISPATCH_METRICS_LISTEN', '0.0.0.0:9100', 'metrics'],
  ['DISPATCH_REDIS_URL', 'redis://other:6379/0', 'redis'],
  ['DISPATCH_TLS_CERT', '/x/tls.crt', 'tls'],
])('refuses extraEnv %s, which would silently replace the chart\'s own', (name, value, key) => {
  const rendered = render([valuesFile(`extraEnv: [{name: ${name}, value: "${value}"}]`)]);
  expect(rendered.status).not.toBe(0);
  expect(rendered.stderr).toContain(`extraEnv must not set ${name}`);
  expect(rendered.stderr).toContain(key);
});

it('still takes variables the chart does not set, e.g. DISPATCH_TLS_REFRESH_MS and DISPATCH_LOG_LEVEL', () => {
  const env = envOf(renderObjects([valuesFile('extraEnv: [{name: DISPATCH_TLS_REFRESH_MS, value: "30000"}, {name: DISPATCH_LOG_LEVEL, value: debug}]')]));
  expect(env.DISPATCH_TLS_REFRESH_MS).toBe('30000');
  expect(env.DISPATCH_LOG_LEVEL).toBe('debug');
});
