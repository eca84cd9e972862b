// A PodDisruptionBudget whose minAvailable is a percentage is rounded up by Kubernetes' disruption
// controller (GetScaledValueFromIntOrPercent(..., roundUp=true)): minAvailable "75%" of 2 pods is 2,
// so no pod may go and every node drain (a cluster upgrade) waits for ever. The chart refused
// minAvailable 2 of 2 pods and "100%", but rendered "51%" to "99%" of 2 pods, and any percentage of
// one. Found by an audit of issue 9.
import { render, renderObjects, useRenderer, valuesFile, type Obj } from '../helm/render-chart';

useRenderer();

const refusal = (yaml: string) => {
  const r = render([valuesFile(yaml)]);
  expect(r.status).not.toBe(0);
  return r.stderr;
};
const pdbOf = (yaml: string) => renderObjects([valuesFile(yaml)]).find((o: Obj) => o.kind === 'PodDisruptionBudget');

it.each([
  ['75% of autoscaling.minReplicas 2', 'podDisruptionBudget: {maxUnavailable: "", minAvailable: "75%"}', 'minAvailable 75% keeps all 2 pods (autoscaling.minReplicas)'],
  ['51% of autoscaling.minReplicas 2', 'podDisruptionBudget: {maxUnavailable: "", minAvailable: "51%"}', 'minAvailable 51% keeps all 2 pods (autoscaling.minReplicas)'],
  ['67% of replicaCount 3', 'replicaCount: 3\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: "67%"}', 'minAvailable 67% keeps all 3 pods (replicaCount)'],
  ['1% of replicaCount 1', 'replicaCount: 1\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: "1%"}', 'minAvailable 1% keeps all 1 pods (replicaCount)'],
])('refuses minAvailable as a percentage that rounds up to every pod: %s', (_what, yaml, said) => {
  expect(refusal(yaml)).toContain(`podDisruptionBudget: ${said}, so a node drain`);
});

it('still refuses 100% with its own words, and takes a percentage that lets a pod go', () => {
  expect(refusal('podDisruptionBudget: {maxUnavailable: "", minAvailable: "100%"}')).toContain('minAvailable 100% keeps every pod');
  expect(pdbOf('podDisruptionBudget: {maxUnavailable: "", minAvailable: "50%"}')!.spec.minAvailable).toBe('50%');
  expect(pdbOf('replicaCount: 3\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: "66%"}')!.spec.minAvailable).toBe('66%');
  expect(pdbOf('replicaCount: 1\nautoscaling: {enabled: false}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: "0%"}')!.spec.minAvailable).toBe('0%');
  expect(pdbOf('autoscaling: {enabled: true, minReplicas: 4, maxReplicas: 8}\npodDisruptionBudget: {maxUnavailable: "", minAvailable: "75%"}')!.spec.minAvailable).toBe('75%');
});
