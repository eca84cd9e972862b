// NetworkPolicies: the bundled Redis admits only dispatch's pods to its port (on by default);
// dispatch's own policy is optional. Selectors are checked against the rendered pods' labels.
import { deploymentOf, find, FULLNAME, problems, REDIS, redisContainerOf, redisSetOf, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

type Selector = { matchLabels: Record<string, string> };
const selects = (selector: Selector, labels: Record<string, string>) => Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v);
const policies = (objects: Obj[]) => objects.filter((o) => o.kind === 'NetworkPolicy');

describe("the bundled Redis's NetworkPolicy", () => {
  it('is on by default: only the dispatch pods reach the Redis pod, only on its port', () => {
    const objects = renderObjects([]);
    const policy = find(objects, 'NetworkPolicy', REDIS)!;
    const redisPod = redisSetOf(objects).spec.template.metadata.labels;
    const dispatchPod = deploymentOf(objects).spec.template.metadata.labels;
    expect(selects(policy.spec.podSelector, redisPod)).toBe(true);
    expect(selects(policy.spec.podSelector, dispatchPod)).toBe(false);
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress;
    expect(rule.ports).toEqual([{ port: redisContainerOf(objects).ports[0].containerPort, protocol: 'TCP' }]);
    expect(rule.ports[0].port).toBe(6379);
    expect(rule.from).toHaveLength(1);
    expect(Object.keys(rule.from[0])).toEqual(['podSelector']); // this namespace only
    expect(selects(rule.from[0].podSelector, dispatchPod)).toBe(true);
    expect(selects(rule.from[0].podSelector, redisPod)).toBe(false);
    expect(policies(objects).map((o) => o.metadata.name)).toEqual([REDIS]);
    expect(problems(objects)).toEqual([]);
  });

  it('admits extraFrom peers besides dispatch', () => {
    const objects = renderObjects([valuesFile('redis: {deploy: {networkPolicy: {extraFrom: [{podSelector: {matchLabels: {app: redis-backup}}}]}}}')]);
    const from = find(objects, 'NetworkPolicy', REDIS)!.spec.ingress[0].from;
    expect(from).toHaveLength(2);
    expect(from[1]).toEqual({ podSelector: { matchLabels: { app: 'redis-backup' } } });
    expect(problems(objects)).toEqual([]);
  });

  it.each([
    ['networkPolicy.enabled false', 'redis: {deploy: {networkPolicy: {enabled: false}}}', []],
    ['an external Redis', 'redis: {standalone: {host: cache.data.svc}}', []],
    ['`helm upgrade --reuse-values` from a chart without the key (on)', 'redis: {deploy: {networkPolicy: null}}', [REDIS]],
  ])('with %s', (_label, values, names) => {
    expect(policies(renderObjects([valuesFile(values)])).map((o) => o.metadata.name)).toEqual(names);
  });
});

describe("dispatch's own NetworkPolicy (networkPolicy.enabled, off by default)", () => {
  const enabled = (rest: string) => renderObjects([valuesFile(`networkPolicy: {enabled: true${rest}}`)]);

  it('admits grpcFrom to the gRPC port and metricsFrom to the metrics port, and nothing else', () => {
    const team = { namespaceSelector: { matchLabels: { team: 'agents' } } };
    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const objects = enabled(`, grpcFrom: [${JSON.stringify(team)}], metricsFrom: [${JSON.stringify(monitoring)}]`);
    const policy = find(objects, 'NetworkPolicy', FULLNAME)!;
    const ports = deploymentOf(objects).spec.template.spec.containers[0].ports;
    const portOf = (name: string) => ports.find((p: { name: string }) => p.name === name).containerPort;
    expect(selects(policy.spec.podSelector, deploymentOf(objects).spec.template.metadata.labels)).toBe(true);
    expect(selects(policy.spec.podSelector, redisSetOf(objects).spec.template.metadata.labels)).toBe(false);
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(policy.spec.ingress).toEqual([
      { ports: [{ port: portOf('grpc'), protocol: 'TCP' }], from: [team] },
      { ports: [{ port: portOf('metrics'), protocol: 'TCP' }], from: [monitoring] },
    ]);
    expect(problems(objects)).toEqual([]);
  });

  it('without peers: the gRPC port from anywhere, the unauthenticated metrics port from nowhere', () => {
    const policy = find(enabled(''), 'NetworkPolicy', FULLNAME)!;
    expect(policy.spec.ingress).toEqual([{ ports: [{ port: 50051, protocol: 'TCP' }] }]);
  });

  it('is not rendered by default', () => {
    expect(find(renderObjects([]), 'NetworkPolicy', FULLNAME)).toBeUndefined();
  });
});

it('pins a Redis image at 7.4.6 or later, with the fixes for CVE-2025-21605 (7.4.3) and CVE-2025-49844 (7.4.6)', () => {
  const image = redisContainerOf(renderObjects([])).image as string;
  const [major, minor, patch] = /^redis:(\d+)\.(\d+)\.(\d+)$/.exec(image)!.slice(1).map(Number);
  expect(major! * 1e6 + minor! * 1e3 + patch!).toBeGreaterThanOrEqual(7_004_006);
});
