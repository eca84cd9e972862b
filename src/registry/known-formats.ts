import type Ajv2020 from 'ajv/dist/2020';
import formatKeyword from 'ajv/dist/vocabularies/format/format';
import { levenshtein } from '../json';

const shown = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...` : text);

/** What to say of an unknown format: the nearest known one, or else all of them. */
function hint(format: string, known: readonly string[]): string {
  const near = known.filter((name) => levenshtein(format.toLowerCase(), name, 2) <= 2);
  return near.length > 0 ? `did you mean ${near.map((name) => JSON.stringify(name)).join(' or ')}?` : `known formats: ${known.join(', ')}`;
}

/**
 * Formats of JSON Schema 2020-12 that ajv-formats does not check: known, so never refused, and
 * taken as annotations (any string passes), as the specification allows.
 */
const ANNOTATION_ONLY = ['idn-email', 'idn-hostname', 'iri', 'iri-reference'];

/** Adds the standard formats ajv-formats lacks, as annotations (see ANNOTATION_ONLY). */
export function addAnnotationFormats(ajv: Ajv2020): void {
  for (const name of ANNOTATION_ONLY) ajv.addFormat(name, true);
}

/**
 * Makes a `format` Ajv does not know a compile error naming it and where it is. Strict mode stays
 * off (tool schemas carry keywords Ajv does not know), and without it Ajv ignored such a format:
 * `"format": "emial"` checked nothing. Ajv's own keyword does the rest.
 */
export function refuseUnknownFormats(ajv: Ajv2020): void {
  ajv.removeKeyword('format');
  ajv.addKeyword({
    ...formatKeyword,
    code(cxt, ruleType) {
      const format: unknown = cxt.schema;
      if (!cxt.$data && typeof format === 'string' && !Object.hasOwn(ajv.formats, format)) {
        throw new Error(`unknown format ${JSON.stringify(shown(format, 100))} at ${shown(cxt.it.errSchemaPath, 200)}: ${hint(format, Object.keys(ajv.formats))}`);
      }
      formatKeyword.code(cxt, ruleType);
    },
  });
}
