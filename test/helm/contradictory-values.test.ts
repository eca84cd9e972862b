// Values that rendered a Deployment that cannot do what they say, now refused at render time:
// - redis.mode none with redis.url: DISPATCH_REDIS_URL was rendered anyway, the one-replica/no-HPA
//   check of mode none was skipped, and NOTES said Redis was off;
// - an HPA utilisation target without the request it is a share of (no resources.requests.cpu):
//   the HPA can never compute it (FailedGetResourceMetric) and never scales.
import { find, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const refusal = (yaml: string) => {
  const r = render([valuesFile(yaml)]);
  expect(r.status).not.toBe(0);
  return r.stderr;
};

it('refuses redis.mode none with a redis.url, saying what to do', () => {
  for (const extra of ['', '\nreplicaCount: 1\nautoscaling: {enabled: false}']) {
    expect(refusal(`redis: {mode: none, url: "redis://redis.data:6379/0"}${extra}`)).toContain(
      'redis.mode none keeps state in each pod\'s memory, but redis.url is set too: set redis.mode to the kind of Redis the URL names (standalone, sentinel or cluster) to use it, or remove redis.url',
    );
  }
});

it('a redis.url with a Redis mode is used as given', () => {
  const env = renderObjects([valuesFile('redis: {mode: standalone, url: "redis://redis.data:6379/0"}')]);
  expect(find(env, 'Deployment')!.spec.template.spec.containers[0].env).toContainEqual({ name: 'DISPATCH_REDIS_URL', value: 'redis://redis.data:6379/0' });
});

it.each([
  ['no requests at all', 'resources: {requests: null, limits: {memory: 1Gi}}', 'cpu'],
  ['a memory request only', 'resources: {requests: {cpu: null, memory: 256Mi}}', 'cpu'],
  ['a memory target without a memory request or limit', 'resources: {requests: {cpu: 250m, memory: null}, limits: {memory: null}}\nheapPercent: 0\nautoscaling: {targetMemoryUtilizationPercentage: 80}', 'memory'],
])('refuses an HPA target without its request: %s', (_label, yaml, resource) => {
  const key = resource === 'cpu' ? 'targetCPUUtilizationPercentage' : 'targetMemoryUtilizationPercentage';
  expect(refusal(yaml)).toContain(`autoscaling.${key} (${resource === 'cpu' ? 70 : 80}) needs resources.requests.${resource}: the HPA measures utilisation as a share of each pod's request`);
});

it.each([
  ['a CPU limit (Kubernetes takes it as the request)', 'resources: {requests: null, limits: {cpu: "1", memory: 1Gi}}'],
  ['no CPU target, a memory target with its request', 'resources: {requests: {cpu: null, memory: 256Mi}}\nautoscaling: {targetCPUUtilizationPercentage: 0, targetMemoryUtilizationPercentage: 80}'],
  ['no HPA', 'resources: {requests: null}\nautoscaling: {enabled: false}'],
])('renders an HPA it can compute, or none: %s', (_label, yaml) => {
  expect(render([valuesFile(yaml)]).stderr).toBe('');
});
