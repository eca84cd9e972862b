// Renders the cluster takes but that break an operator's day, refused at render time:
// - a PodDisruptionBudget that lets no pod go (minAvailable at or above the replicas, 100%, or
//   maxUnavailable 0): every node drain, and so every cluster upgrade, waits for ever;
// - a ServiceMonitor whose scrapeTimeout is longer than its interval: Prometheus refuses that
//   scrape config, and with it its whole configuration reload.
import { render, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

const refusal = (yaml: string) => {
  const r = render([valuesFile(yaml)]);
  expect(r.status).not.toBe(0);
  return r.stderr;
};
const kinds = (yaml: string) => renderObjects([valuesFile(yaml)]).map((o: Obj) => o.kind);

it.each([
  ['minAvailable equal to replicaCount', 'replicaCount: 3\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: 3}', 'minAvailable 3 keeps all 3 pods (replicaCount)'],
  ['minAvailable at autoscaling.minReplicas', 'autoscaling: {enabled: true, minReplicas: 2, maxReplicas: 4}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: 2}', 'minAvailable 2 keeps all 2 pods (autoscaling.minReplicas)'],
  ['minAvailable 100%', 'podDisruptionBudget: {maxUnavailable: "", minAvailable: "100%"}', 'minAvailable 100% keeps every pod'],
  ['maxUnavailable 0', 'podDisruptionBudget: {maxUnavailable: 0}', 'maxUnavailable 0 lets no pod go'],
  ['maxUnavailable 0%', 'podDisruptionBudget: {maxUnavailable: "0%"}', 'maxUnavailable 0% lets no pod go'],
])('refuses a PodDisruptionBudget that blocks drains: %s', (_what, yaml, said) => {
  expect(refusal(yaml)).toContain(`podDisruptionBudget: ${said}, so a node drain`);
});

it('takes budgets that let a pod go, and none at all', () => {
  expect(kinds('replicaCount: 3\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: 2}')).toContain('PodDisruptionBudget');
  expect(kinds('podDisruptionBudget: {maxUnavailable: "", minAvailable: "50%"}')).toContain('PodDisruptionBudget');
  expect(kinds('podDisruptionBudget: {maxUnavailable: "25%"}')).toContain('PodDisruptionBudget');
  expect(kinds('replicaCount: 1\nautoscaling: {enabled: false}\npodDisruptionBudget: {enabled: false}')).not.toContain('PodDisruptionBudget');
});

const monitor = (interval: string, scrapeTimeout: string) => `metrics: {enabled: true, serviceMonitor: {enabled: true, interval: "${interval}", scrapeTimeout: "${scrapeTimeout}"}}`;

it.each([
  ['30s', '45s'],
  ['1m', '1m500ms'],
  ['500ms', '1s'],
])('refuses a ServiceMonitor scraping every %s with a timeout of %s', (interval, timeout) => {
  expect(refusal(monitor(interval, timeout))).toContain(`metrics.serviceMonitor.scrapeTimeout (${timeout}) must not be longer than its interval (${interval})`);
});

it('refuses a duration Prometheus cannot read, naming the key', () => {
  expect(refusal(monitor('30 seconds', '10s'))).toContain('metrics.serviceMonitor.interval must be a Prometheus duration such as 30s or 1m30s, not "30 seconds"');
  expect(refusal(monitor('30s', ''))).toContain('metrics.serviceMonitor.scrapeTimeout must be a Prometheus duration');
});

it.each([
  ['30s', '10s'],
  ['1m', '1m'],
  ['1m30s', '90s'],
  ['2h', '59m59s999ms'],
])('takes a ServiceMonitor scraping every %s with a timeout of %s', (interval, timeout) => {
  const sm = renderObjects([valuesFile(monitor(interval, timeout))]).find((o: Obj) => o.kind === 'ServiceMonitor')!;
  expect(sm.spec.endpoints[0]).toMatchObject({ interval, scrapeTimeout: timeout });
});
