// The PodDisruptionBudget had no unhealthyPodEvictionPolicy, so Kubernetes' default
// (IfHealthyBudget) applied: a crash-looping pod counts against the budget and cannot be evicted
// while the others are down too, blocking node drains. The value (default AlwaysAllow; GA from
// Kubernetes 1.31, beta from 1.27) is rendered only when set non-empty.
import { find, problems, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const pdbOf = (yaml?: string) => find(renderObjects(yaml === undefined ? [] : [valuesFile(yaml)]), 'PodDisruptionBudget')!;

it('lets a pod that is not Ready be evicted by default, in a budget the Kubernetes schema takes', () => {
  const pdb = pdbOf();
  expect(pdb.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  expect(problems([pdb])).toEqual([]);
});

it('takes IfHealthyBudget, and leaves the field out when empty', () => {
  expect(pdbOf('podDisruptionBudget: {unhealthyPodEvictionPolicy: IfHealthyBudget}').spec.unhealthyPodEvictionPolicy).toBe('IfHealthyBudget');
  expect(pdbOf('podDisruptionBudget: {unhealthyPodEvictionPolicy: ""}').spec).not.toHaveProperty('unhealthyPodEvictionPolicy');
});

it('refuses a policy Kubernetes does not know', () => {
  const r = render([valuesFile('podDisruptionBudget: {unhealthyPodEvictionPolicy: Always}')]);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('- podDisruptionBudget.unhealthyPodEvictionPolicy: podDisruptionBudget.unhealthyPodEvictionPolicy must be one of the following: "", "AlwaysAllow", "IfHealthyBudget"');
});
