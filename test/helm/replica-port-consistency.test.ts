// Values the schema accepts one key at a time but whose combination the cluster cannot run:
// an HPA whose maxReplicas is below its minReplicas (the API server rejects it: "must be greater
// than or equal to `minReplicas`"), and a metrics port equal to the gRPC port (dispatchd binds the
// metrics endpoint first, then cannot listen for gRPC: "the address is already in use", so every
// pod crash-loops). The chart must refuse both at render time, naming the keys.
import { find, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

describe('autoscaling.minReplicas and maxReplicas', () => {
  it('refuses maxReplicas below minReplicas (the API server would reject the HPA)', () => {
    const r = render([valuesFile('autoscaling: {minReplicas: 5, maxReplicas: 3}')]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/autoscaling\.maxReplicas \(3\) must be at least autoscaling\.minReplicas \(5\)/);
  });

  it('still renders maxReplicas equal to minReplicas, and ignores them with the HPA off', () => {
    const hpa = find(renderObjects([valuesFile('autoscaling: {minReplicas: 3, maxReplicas: 3}')]), 'HorizontalPodAutoscaler')!;
    expect(hpa.spec).toMatchObject({ minReplicas: 3, maxReplicas: 3 });
    expect(render([valuesFile('autoscaling: {enabled: false, minReplicas: 5, maxReplicas: 3}')]).status).toBe(0);
  });
});

describe('metrics.port and server.port', () => {
  it.each([
    ['the default gRPC port', 'metrics: {port: 50051}'],
    ['a custom gRPC port', 'server: {port: 8080}\nmetrics: {port: 8080}'],
  ])('refuses a metrics port equal to %s (dispatchd could not listen for gRPC)', (_label, values) => {
    const r = render([valuesFile(values)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/metrics\.port .* must differ from server\.port/);
  });

  it('accepts the same number when metrics are off (no metrics listener)', () => {
    expect(render([valuesFile('metrics: {enabled: false, port: 50051}')]).status).toBe(0);
  });
});
