// The chart runs `config` through `tpl` (documented: `{{ .Release.Namespace }}` in a tool's URL),
// so a tool description holding a Mustache placeholder, `Hello {{name}}` (common in LLM tooling),
// failed the render with `function "name" not defined`, and nothing said how to write one. The
// chart keeps templating the config and documents writing literal braces as a template that
// prints them; these are the documented forms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../src/config';
import { CHART, find, NAMESPACE, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const tool = (description: string) => `config:\n  tools:\n    - name: render_greeting\n      description: '${description}'\n      effect: read_only\n      builtin: { name: echo }\n`;

const descriptionOf = (yaml: string) =>
  parseConfig(find(renderObjects([valuesFile(yaml)]), 'ConfigMap')!.data['config.yaml'], 'config.yaml').tools[0]!.description;

it.each([
  ['a quoted string', 'Hello {{ "{{name}}" }}'],
  ['a raw string', 'Hello {{`{{name}}`}}'],
])('literal braces written as %s reach the server as written in the description', (_label, written) => {
  expect(descriptionOf(tool(written))).toBe('Hello {{name}}');
});

it('template expressions in the config still render', () => {
  expect(descriptionOf(tool('Runs in {{ .Release.Namespace }}'))).toBe(`Runs in ${NAMESPACE}`);
});

it('unescaped braces fail the render, as values.yaml and the README warn', () => {
  const r = render([valuesFile(tool('Hello {{name}}'))]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('function "name" not defined');
  for (const doc of ['values.yaml', 'README.md']) {
    expect(readFileSync(join(CHART, doc), 'utf8')).toContain('Hello {{ "{{name}}" }}');
  }
});
