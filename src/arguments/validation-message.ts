import type { ErrorObject } from 'ajv';

const MAX_FRAGMENT = 200;

function clip(text: string): string {
  return text.length > MAX_FRAGMENT ? `${text.slice(0, MAX_FRAGMENT)}...` : text;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${clip(JSON.stringify(value) ?? String(value))} (${type})`;
}

/**
 * One line per schema violation, naming the field path, what was passed and the schema fragment
 * expected, so that a model can correct the call.
 */
export function formatValidationErrors(errors: readonly ErrorObject[], max = 5): string {
  const lines = errors.slice(0, max).map((error) => {
    const path = error.instancePath === '' ? '/' : error.instancePath;
    switch (error.keyword) {
      case 'required':
        return `${path}: missing required property "${(error.params as { missingProperty: string }).missingProperty}"`;
      case 'additionalProperties':
        return `${path}: unexpected property "${(error.params as { additionalProperty: string }).additionalProperty}" (the schema allows no other properties)`;
      default: {
        const expected = clip(JSON.stringify(error.parentSchema ?? error.schema) ?? '');
        return `${path}: got ${describe(error.data)}; ${error.message ?? 'invalid'}; expected ${expected}`;
      }
    }
  });
  const more = errors.length > max ? ` (and ${errors.length - max} more)` : '';
  return `invalid arguments: ${lines.join('; ')}${more}`;
}
