// The chart hard-coded DISPATCH_LISTEN=0.0.0.0:<port> and DISPATCH_METRICS_LISTEN=0.0.0.0:<port>,
// and refuses both as extraEnv or flags: on an IPv6-only cluster (the pod's IP is IPv6) nothing
// answered the probes and no pod was ever Ready. server.listenHost sets the host of both.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseDaemonOptions } from '../../src/cli/dispatchd-options';
import { CHART, envOf, render, renderObjects, tempDir, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

it('listens on 0.0.0.0 by default, as before', () => {
  const env = envOf(renderObjects([]));
  expect([env.DISPATCH_LISTEN, env.DISPATCH_METRICS_LISTEN]).toEqual(['0.0.0.0:50051', '0.0.0.0:9464']);
});

it('listens on [::] (both families) for gRPC and metrics when told, in a form dispatchd parses', () => {
  const env = envOf(renderObjects([valuesFile('server: {listenHost: "[::]", port: 50061}\nmetrics: {port: 9465}')]));
  expect([env.DISPATCH_LISTEN, env.DISPATCH_METRICS_LISTEN]).toEqual(['[::]:50061', '[::]:9465']);
  const options = parseDaemonOptions([], env as Record<string, string>);
  expect([options.listen, options.metricsListen]).toEqual(['[::]:50061', '[::]:9465']);
});

it('refuses an IPv6 address without brackets, which dispatchd cannot split from the port', () => {
  const r = render([valuesFile('server: {listenHost: "::"}')]);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('- server.listenHost: must match pattern');
});

it('a renderer that skips the schema still refuses it, saying how to write it', () => {
  const copy = join(tempDir('chart-'), 'dispatch');
  cpSync(CHART, copy, { recursive: true });
  rmSync(join(copy, 'values.schema.json'));
  const r = render([valuesFile('server: {listenHost: "::"}')], copy);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('server.listenHost must be an IPv4 address or a host name, or an IPv6 address in brackets ("[::]"), not "::"');
});
