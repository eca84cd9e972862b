// With the HPA on by default (2-10 pods), a client keeps its one HTTP/2 connection, so pods added
// later got no traffic from clients already connected: the chart's config left
// limits.max_connection_age_ms at the server's 0 (off). Its default config now sets 5 minutes,
// which the server's own parser reads, and a user's config keeps it unless it sets the key.
import { parseConfig } from '../../src/config';
import { find, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const configOf = (yaml?: string) =>
  parseConfig(find(renderObjects(yaml === undefined ? [] : [valuesFile(yaml)]), 'ConfigMap')!.data['config.yaml'], 'config.yaml');

it('the default config ages client connections out after 5 minutes', () => {
  expect(configOf().limits.maxConnectionAgeMs).toBe(300_000);
});

it("a user's config with limits of its own keeps the default age", () => {
  const config = configOf('config: {tools: [{name: echo, builtin: {name: echo}}], limits: {max_sessions: 100}}');
  expect([config.limits.maxConnectionAgeMs, config.limits.maxSessions]).toEqual([300_000, 100]);
});

it.each([
  ['another age', 60000],
  ['0 (off)', 0],
])('a user who sets it gets %s', (_label, ms) => {
  expect(configOf(`config: {limits: {max_connection_age_ms: ${ms}}}`).limits.maxConnectionAgeMs).toBe(ms);
});
