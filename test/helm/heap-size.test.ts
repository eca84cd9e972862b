// dispatchd's V8 heap is sized from the container's memory limit: without --max-old-space-size,
// Node 20 takes half the cgroup limit (256 MiB of the chart's 512Mi) and dies "JavaScript heap out
// of memory" far below the limit. The chart sets heapPercent (65) of limits.memory.
import { envOf, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const nodeOptions = (values: string) => envOf(renderObjects(values ? [valuesFile(values)] : [])).NODE_OPTIONS;

it('by default (512Mi), NODE_OPTIONS gives the heap 332 MiB', () => {
  expect(nodeOptions('')).toBe('--max-old-space-size=332');
});

it.each([
  ['2Gi', '1331'],
  ['1G', '619'],
  ['1500M', '929'],
  ['1.5Gi', '998'],
  ['524288Ki', '332'],
  ['536870912', '332'],
])('limits.memory %s gives %s MiB', (memory, mib) => {
  expect(nodeOptions(`resources: {limits: {memory: ${memory}}}`)).toBe(`--max-old-space-size=${mib}`);
});

it('heapPercent is the share taken', () => {
  expect(nodeOptions('heapPercent: 50\nresources: {limits: {memory: 2Gi}}')).toBe('--max-old-space-size=1024');
});

it.each([
  ['no memory limit (null removes the default, as in Helm)', 'resources: {limits: {memory: null, cpu: "1"}}'],
  ['no limits', 'resources: {limits: null}'],
  ['no resources', 'resources: null\nautoscaling: {enabled: false}'], // the HPA's CPU target needs a request
  ['heapPercent 0', 'heapPercent: 0'],
])('%s: no NODE_OPTIONS', (_label, values) => {
  expect(nodeOptions(values)).toBeUndefined();
});

describe('a NODE_OPTIONS in extraEnv', () => {
  const env = (entry: string, memory = '512Mi') => {
    const c = renderObjects([valuesFile(`resources: {limits: {memory: ${memory}}}\nextraEnv: [${entry}]`)]);
    return envOf(c);
  };
  const count = (entry: string) =>
    renderObjects([valuesFile(`extraEnv: [${entry}]`)])
      .find((o) => o.kind === 'Deployment')!
      .spec.template.spec.containers[0].env.filter((e: { name: string }) => e.name === 'NODE_OPTIONS').length;

  it('is appended to the flag, once', () => {
    const entry = '{name: NODE_OPTIONS, value: "--enable-source-maps"}';
    expect(env(entry).NODE_OPTIONS).toBe('--max-old-space-size=332 --enable-source-maps');
    expect(count(entry)).toBe(1);
  });

  it('that sets --max-old-space-size itself is kept as given', () => {
    const entry = '{name: NODE_OPTIONS, value: "--max-old-space-size=300 --trace-gc"}';
    expect(env(entry).NODE_OPTIONS).toBe('--max-old-space-size=300 --trace-gc');
    expect(count(entry)).toBe(1);
  });

  it('from a valueFrom is rendered as given, without the chart\'s', () => {
    const entry = '{name: NODE_OPTIONS, valueFrom: {configMapKeyRef: {name: node, key: options}}}';
    expect(env(entry).NODE_OPTIONS).toEqual({ configMapKeyRef: { name: 'node', key: 'options' } });
    expect(count(entry)).toBe(1);
  });

  it('without a memory limit is kept alone', () => {
    const c = renderObjects([valuesFile('resources: {limits: null}\nextraEnv: [{name: NODE_OPTIONS, value: "--trace-gc"}]')]);
    expect(envOf(c).NODE_OPTIONS).toBe('--trace-gc');
  });
});

it('refuses a memory limit it cannot read, and a share out of range, by name', () => {
  const bad = render([valuesFile('resources: {limits: {memory: 512MiB}}')]);
  expect(bad.status).not.toBe(0);
  expect(bad.stderr).toContain(
    'resources.limits.memory "512MiB" is not a memory quantity the chart can size the heap from (a number with no suffix or one of k, M, G, T, Ki, Mi, Gi, Ti); set heapPercent: 0 to leave the heap to node',
  );
  const over = render([valuesFile('heapPercent: 120')]);
  expect(over.status).not.toBe(0);
  expect(over.stderr).toContain('- heapPercent: must be <= 100'); // values.schema.json, before the template's own check
  const small = render([valuesFile('resources: {limits: {memory: 16Mi}}')]);
  expect(small.status).not.toBe(0);
  expect(small.stderr).toContain('heapPercent 65 of resources.limits.memory 16Mi is 10 MiB of heap, under the 16 MiB node needs to start');
});
