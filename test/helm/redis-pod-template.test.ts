// The bundled Redis is one pod: any change to its pod template restarts it, and side-effecting
// calls fail closed (STORE_UNAVAILABLE) meanwhile. A chart release that changes nothing of that
// pod must leave its template as it was.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART, REDIS, render, tempDir, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

/** The chart as released under `version`. */
function chartAt(version: string): string {
  const copy = join(tempDir('chart-'), 'dispatch');
  cpSync(CHART, copy, { recursive: true });
  const meta = join(copy, 'Chart.yaml');
  writeFileSync(meta, readFileSync(meta, 'utf8').replace(/^version: .*$/m, `version: ${version}`));
  return copy;
}

function redisSet(chart: string, values: string[] = []): Obj {
  const r = render(values, chart);
  if (r.status !== 0) throw new Error(r.stderr);
  const objects = parseAllDocuments(r.stdout, { version: '1.1' }).map((d) => d.toJS() as Obj | null);
  return objects.find((o) => o?.kind === 'StatefulSet' && o.metadata.name === REDIS)!;
}

it.each([
  ['the default values', ''],
  ['an image digest without a tag', `redis: {deploy: {image: {tag: null, digest: "sha256:${'0'.repeat(64)}"}}}`],
])('two chart versions render the same Redis pod template, with %s', (_label, values) => {
  const files = values ? [valuesFile(values)] : [];
  const before = redisSet(chartAt('0.4.0'), files);
  const after = redisSet(chartAt('0.5.1'), files);
  expect(after.spec.template).toEqual(before.spec.template);
  expect(after.spec.template.metadata.labels['helm.sh/chart']).toBeUndefined();
  // The StatefulSet itself still says which chart made it.
  expect([before.metadata.labels['helm.sh/chart'], after.metadata.labels['helm.sh/chart']]).toEqual(['dispatch-0.4.0', 'dispatch-0.5.1']);
  // The pod keeps every other label of the StatefulSet, its selector's among them.
  const { 'helm.sh/chart': _chart, ...rest } = after.metadata.labels;
  expect(after.spec.template.metadata.labels).toEqual(rest);
  expect(after.spec.template.metadata.labels).toMatchObject(after.spec.selector.matchLabels);
});
