import type { ErrorObject } from 'ajv';
import { shortened } from '../pipeline/bound-result';
import { STOPPED_KEYWORD } from '../registry/schema-errors';
import { isObject, type Schema } from '../registry/schema-index';
import { closedNames } from './closed-names';
import { hintedKey } from './hinted-key';

/** Longest value, schema fragment, field path or property name a line shows, in characters. */
const MAX_FRAGMENT = 200;
/**
 * Longest the lines together may be, in characters, as a tool's error text is: keys and paths are
 * the model's own, and three unexpected keys of 300,000 characters made a 900 KB message.
 */
const MAX_MESSAGE = 2_000;

const clip = (text: string): string => shortened(text, MAX_FRAGMENT);

/**
 * The line of an unexpected property, with the property it may have meant (`hintedKey`): one of the names its
 * object's schema allows (`closedNames`: with `unevaluatedProperties`, those its `allOf` parts and
 * `$ref`s declare too, read within `root`), else of its own `properties`.
 */
function unexpected(path: string, error: ErrorObject, name: string, root: Schema | undefined): string {
  const parent = isObject(error.parentSchema) ? error.parentSchema : {};
  const declared = (root === undefined ? undefined : closedNames(parent, root)) ?? (isObject(parent.properties) ? Object.keys(parent.properties) : []);
  const object = typeof error.data === 'object' && error.data !== null ? error.data : {};
  const near = hintedKey(name, declared, object);
  return `${path}: unexpected property "${clip(name)}" (the schema allows no other properties${near === undefined ? '' : `; did you mean "${clip(near)}"?`})`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${clip(JSON.stringify(value) ?? String(value))} (${type})`;
}

/**
 * One line per schema violation, naming the field path, what was passed and the schema fragment
 * expected, so that a model can correct the call. Each part is cut at 200 characters and the
 * lines together at 2,000, with `...` where cut. Where checking stopped (too many errors, see
 * schema-errors.ts), the last error says so. `root`, the tool's whole schema, resolves the `$ref`s
 * an unexpected property's hint reads.
 */
export function formatValidationErrors(all: readonly ErrorObject[], max = 5, root?: Schema): string {
  const stopped = all.at(-1)?.keyword === STOPPED_KEYWORD ? all.at(-1) : undefined;
  const errors = stopped ? all.slice(0, -1) : all;
  const lines = errors.slice(0, max).map((error) => {
    const path = error.instancePath === '' ? '/' : clip(error.instancePath);
    switch (error.keyword) {
      case 'required':
        return `${path}: missing required property "${clip((error.params as { missingProperty: string }).missingProperty)}"`;
      case 'additionalProperties':
        return unexpected(path, error, (error.params as { additionalProperty: string }).additionalProperty, root);
      // 2020-12's "no other properties" for schemas composed with allOf or $ref: named too, as the
      // object quoted is cut at 200 characters and may not show the key.
      case 'unevaluatedProperties':
        return unexpected(path, error, (error.params as { unevaluatedProperty: string }).unevaluatedProperty, root);
      default: {
        const expected = clip(JSON.stringify(error.parentSchema ?? error.schema) ?? '');
        return `${path}: got ${describe(error.data)}; ${error.message ?? 'invalid'}; expected ${expected}`;
      }
    }
  });
  if (stopped && errors.length === 0) return `invalid arguments: ${stopped.message}`;
  const more = stopped ? ` (and more: ${stopped.message})` : errors.length > max ? ` (and ${errors.length - max} more)` : '';
  return `invalid arguments: ${shortened(lines.join('; '), MAX_MESSAGE)}${more}`;
}
