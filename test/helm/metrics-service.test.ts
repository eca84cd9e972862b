// The metrics port (unauthenticated; series labelled by tenant and tool) is on a ClusterIP Service
// of its own, never on the main Service, whose type may put it on a load balancer or every node.
import { join } from 'node:path';
import { deploymentOf, find, FULLNAME, problems, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

const METRICS = `${FULLNAME}-metrics`;
const services = (objects: Obj[]) => objects.filter((o) => o.kind === 'Service');
const portsOf = (svc: Obj) => svc.spec.ports.map((p: { name: string; port: number }) => `${p.name}:${p.port}`);

it.each(['ClusterIP', 'LoadBalancer', 'NodePort'])('with service.type %s, only the ClusterIP metrics Service has the metrics port', (type) => {
  const objects = renderObjects([valuesFile(`service: {type: ${type}}`)]);
  const metricsPort = deploymentOf(objects).spec.template.spec.containers[0].ports.find((p: { name: string }) => p.name === 'metrics').containerPort;
  expect(find(objects, 'Service')!.spec.type).toBe(type);
  const withMetrics = services(objects).filter((s) => s.spec.ports.some((p: { name: string; port: number; targetPort: unknown }) => p.name === 'metrics' || p.port === metricsPort || p.targetPort === 'metrics'));
  expect(withMetrics.map((s) => s.metadata.name)).toEqual([METRICS]);
  const svc = withMetrics[0]!;
  expect(svc.spec.type).toBe('ClusterIP');
  expect(svc.spec.ports).toEqual([{ name: 'metrics', port: metricsPort, targetPort: 'metrics', protocol: 'TCP', appProtocol: 'http' }]);
  expect(svc.spec.selector).toEqual(deploymentOf(objects).spec.selector.matchLabels);
  expect(portsOf(find(objects, 'Service')!)).toEqual(['grpc:50051']);
  expect(problems(objects)).toEqual([]);
});

it('the ServiceMonitor selects the metrics Service alone', () => {
  const objects = renderObjects([join(__dirname, 'values-sentinel-tls.yaml'), valuesFile('metrics: {service: {annotations: {prometheus.io/scrape: "true"}}}')]);
  const sm = find(objects, 'ServiceMonitor')!;
  const selected = services(objects).filter((s) => Object.entries<string>(sm.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels[k] === v));
  expect(selected.map((s) => s.metadata.name)).toEqual([METRICS]);
  expect(sm.spec.namespaceSelector).toEqual({ matchNames: ['agents'] });
  expect(sm.spec.endpoints.map((e: { port: string }) => e.port)).toEqual(['metrics']);
  expect(find(objects, 'Service', METRICS)!.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
  expect(problems(objects)).toEqual([]);
});

it('no metrics Service without metrics', () => {
  const objects = renderObjects([valuesFile('metrics: {enabled: false}')]);
  expect(find(objects, 'Service', METRICS)).toBeUndefined();
  expect(services(objects).map((s) => s.metadata.name).sort()).toEqual([FULLNAME, `${FULLNAME}-headless`, `${FULLNAME}-redis`]);
});
