// The chart's ServiceMonitor and its own NetworkPolicy together: with networkPolicy.enabled and no
// networkPolicy.metricsFrom, the policy admits nobody to the metrics port, so every scrape the
// ServiceMonitor asks for is dropped and the targets stay down, though the chart made both
// objects. The chart now refuses that combination, naming the value to set. Found by an audit of
// issue 9.
import { FULLNAME, find, render, renderObjects, useRenderer, valuesFile } from '../helm/render-chart';

useRenderer();

const monitor = 'metrics: {enabled: true, serviceMonitor: {enabled: true}}';
const prometheus = '[{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]';

it('refuses a ServiceMonitor whose scrapes the chart\'s NetworkPolicy drops', () => {
  const r = render([valuesFile(`${monitor}\nnetworkPolicy: {enabled: true}`)]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('metrics.serviceMonitor.enabled with networkPolicy.enabled needs networkPolicy.metricsFrom');
});

it('takes it with metricsFrom, and either one alone', () => {
  const both = renderObjects([valuesFile(`${monitor}\nnetworkPolicy: {enabled: true, metricsFrom: ${prometheus}}`)]);
  expect(find(both, 'ServiceMonitor')).toBeDefined();
  expect(find(both, 'NetworkPolicy', FULLNAME)!.spec.ingress[1].ports[0].port).toBe(9464);
  expect(find(renderObjects([valuesFile(monitor)]), 'ServiceMonitor')).toBeDefined();
  expect(find(renderObjects([valuesFile('networkPolicy: {enabled: true}')]), 'NetworkPolicy', FULLNAME)).toBeDefined();
});
