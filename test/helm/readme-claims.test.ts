// What the chart README says it creates must match what the chart renders.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, FULLNAME, renderObjects, useRenderer } from './render-chart';

useRenderer({ reuseBuild: true });

it('names every Secret the chart creates by default, and never claims it creates none', () => {
  const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
  const created = renderObjects([]).filter((o) => o.kind === 'Secret').map((o) => o.metadata.name.replace(FULLNAME, '<fullname>'));
  expect(created).toEqual(['<fullname>-redis-auth']);
  for (const name of created) expect(readme).toContain(`| Secret \`${name}\` |`);
  expect(readme).not.toMatch(/never created/i);
});
