// What Helm does before rendering a chart that has a values.schema.json: it validates the merged
// values (values.yaml, then each -f file) against that JSON Schema and, on any error, renders
// nothing and exits with the errors. tools/helm-render does not, so render-chart.ts calls this
// first. The merged values come from tools/helm-render itself (a copy of the chart's values with a
// template printing them), so they are merged exactly as the real render merges them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';

const compiled = new Map<string, ValidateFunction>();

/** The chart's schema, compiled once per text (draft-07, as Helm reads it); null when the chart has none. */
function validatorOf(chart: string): ValidateFunction | null {
  const file = join(chart, 'values.schema.json');
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8');
  let validate = compiled.get(text);
  if (!validate) {
    // strict: a keyword the schema misspells is an error here too, not silently nothing; verbose: errors carry the value.
    validate = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(text));
    compiled.set(text, validate);
  }
  return validate;
}

/** "shutdown.graceMs" from "/shutdown/graceMs"; "(root)" for the values themselves. */
const keyOf = (pointer: string) =>
  pointer === '' ? '(root)' : pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** One line per error, in the words of Helm's validator (gojsonschema), each naming the key. */
function describe(e: ErrorObject): string {
  const key = keyOf(e.instancePath);
  switch (e.keyword) {
    case 'additionalProperties':
      return `${key}: Additional property ${e.params.additionalProperty} is not allowed`;
    case 'type':
      return `${key}: Invalid type. Expected: ${[e.params.type].flat().join(' or ')}, given: ${typeOf(e.data)}`;
    case 'enum':
      return `${key}: ${key} must be one of the following: ${e.params.allowedValues.map((v: unknown) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${key}: ${e.message}`;
  }
}

/**
 * Helm's message for values the chart's schema refuses, or null when they pass (or there is no
 * schema). `render` runs tools/helm-render with its arguments before the value files; `dir` is
 * a fresh directory for the values-printing chart.
 */
export function schemaRefusal(
  render: (valueFiles: string[], chart: string) => { status: number | null; stdout: string; stderr: string },
  chart: string,
  valueFiles: string[],
  dir: string,
): { stderr: string } | null {
  const validate = validatorOf(chart);
  if (!validate) return null;
  // The answer depends only on the chart's schema, values and Chart.yaml and on the value files
  // (their paths, which messages name, and texts): the same values rendered again in a test file
  // (the defaults, mostly) take it from here.
  const text = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : null);
  const key = JSON.stringify([chart, ...['values.schema.json', 'values.yaml', 'Chart.yaml'].map((f) => text(join(chart, f))), ...valueFiles.map((f) => [f, text(f)])]);
  if (!refusals.has(key)) refusals.set(key, refusalOf(render, validate, chart, valueFiles, dir));
  return refusals.get(key)!;
}

const refusals = new Map<string, { stderr: string } | null>();

function refusalOf(
  render: (valueFiles: string[], chart: string) => { status: number | null; stdout: string; stderr: string },
  validate: ValidateFunction,
  chart: string,
  valueFiles: string[],
  dir: string,
): { stderr: string } | null {
  const printer = join(dir, 'dispatch');
  mkdirSync(join(printer, 'templates'), { recursive: true });
  copyFileSync(join(chart, 'Chart.yaml'), join(printer, 'Chart.yaml'));
  copyFileSync(join(chart, 'values.yaml'), join(printer, 'values.yaml'));
  writeFileSync(join(printer, 'templates', 'values.json'), '{{ toJson .Values }}\n');
  const r = render(valueFiles, printer);
  if (r.status !== 0) return { stderr: r.stderr }; // unreadable values: the real render fails the same way
  const values = JSON.parse(r.stdout.replace(/^(---|# Source: .*)$/gm, ''));
  if (validate(values)) return null;
  const lines = (validate.errors ?? []).map((e) => `- ${describe(e)}`);
  return { stderr: `Error: values don't meet the specifications of the schema(s) in the following chart(s):\ndispatch:\n${lines.join('\n')}\n` };
}
