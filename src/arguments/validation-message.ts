import type { ErrorObject } from 'ajv';
import { shortened } from '../pipeline/bound-result';
import { STOPPED_KEYWORD } from '../registry/schema-errors';
import { isNearMiss } from './enum-near-miss';

/** Longest value, schema fragment, field path or property name a line shows, in characters. */
const MAX_FRAGMENT = 200;
/**
 * Longest the lines together may be, in characters, as a tool's error text is: keys and paths are
 * the model's own, and three unexpected keys of 300,000 characters made a 900 KB message.
 */
const MAX_MESSAGE = 2_000;

const clip = (text: string): string => shortened(text, MAX_FRAGMENT);

/**
 * Longest unexpected name compared with the schema's properties, most properties read, and the
 * most their lengths may differ (separators and one typo): a near-miss test costs ~3-8 µs, and a
 * refusal names up to 5 unexpected properties.
 */
const MAX_NEAR_NAME = 256;
const MAX_NEAR_CANDIDATES = 200;
const MAX_NEAR_LENGTH_GAP = 4;

/**
 * The one property of the object's schema that an unexpected name is a misspelling of, and the
 * object does not hold (`citty` for `city`, `cityName` for `city_name`): as enum-near-miss.ts reads
 * a near miss (one typo in one word, never its first letter, or other separators). None when no
 * property or more than one is near.
 */
function nearProperty(error: ErrorObject, name: string): string | undefined {
  const properties = (error.parentSchema as { properties?: unknown } | undefined)?.properties;
  if (name.length > MAX_NEAR_NAME || typeof properties !== 'object' || properties === null) return undefined;
  const data = typeof error.data === 'object' && error.data !== null ? error.data : {};
  let near: string | undefined;
  for (const candidate of Object.keys(properties).slice(0, MAX_NEAR_CANDIDATES)) {
    if (Math.abs(candidate.length - name.length) > MAX_NEAR_LENGTH_GAP || Object.prototype.hasOwnProperty.call(data, candidate) || !isNearMiss(name, candidate)) continue;
    if (near !== undefined) return undefined;
    near = candidate;
  }
  return near;
}

/** The line of an unexpected property, with the property it may have meant. */
function unexpected(path: string, error: ErrorObject, name: string): string {
  const near = nearProperty(error, name);
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
 * schema-errors.ts), the last error says so.
 */
export function formatValidationErrors(all: readonly ErrorObject[], max = 5): string {
  const stopped = all.at(-1)?.keyword === STOPPED_KEYWORD ? all.at(-1) : undefined;
  const errors = stopped ? all.slice(0, -1) : all;
  const lines = errors.slice(0, max).map((error) => {
    const path = error.instancePath === '' ? '/' : clip(error.instancePath);
    switch (error.keyword) {
      case 'required':
        return `${path}: missing required property "${clip((error.params as { missingProperty: string }).missingProperty)}"`;
      case 'additionalProperties':
        return unexpected(path, error, (error.params as { additionalProperty: string }).additionalProperty);
      // 2020-12's "no other properties" for schemas composed with allOf or $ref: named too, as the
      // object quoted is cut at 200 characters and may not show the key.
      case 'unevaluatedProperties':
        return unexpected(path, error, (error.params as { unevaluatedProperty: string }).unevaluatedProperty);
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
