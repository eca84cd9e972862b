import type Ajv2020 from 'ajv/dist/2020';
import formatKeyword from 'ajv/dist/vocabularies/format/format';
import { levenshtein } from '../json';

const shown = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...` : text);

/** What to add to the note of an unknown format: the nearest known ones, if any (a typo: two edits in five letters or more, one in fewer). */
function hint(format: string, known: readonly string[]): string {
  const most = format.length >= 5 ? 2 : 1;
  const near = known.filter((name) => levenshtein(format.toLowerCase(), name, most) <= most);
  return near.length > 0 ? ` (did you mean ${near.map((name) => JSON.stringify(name)).join(' or ')}?)` : '';
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
 * Takes a `format` Ajv does not know as an annotation (it checks nothing), as JSON Schema 2020-12
 * does, and notes it in `notes` with where it is and the nearest known format: schemas made by
 * generators name formats no validator knows (pydantic's path, ipvanyaddress, uuid4; zod's ulid,
 * cuid), and refusing them refused whole workers. Strict mode stays off (tool schemas carry
 * keywords Ajv does not know). Ajv's own keyword does the rest.
 */
export function noteUnknownFormats(ajv: Ajv2020, notes: Set<string>): void {
  ajv.removeKeyword('format');
  ajv.addKeyword({
    ...formatKeyword,
    code(cxt, ruleType) {
      const format: unknown = cxt.schema;
      if (!cxt.$data && typeof format === 'string' && !Object.hasOwn(ajv.formats, format)) {
        // A Set: once per place, as Ajv may compile a subschema more than once.
        notes.add(`${JSON.stringify(shown(format, 100))} at ${shown(cxt.it.errSchemaPath, 200)}${hint(format, Object.keys(ajv.formats))}`);
        return;
      }
      formatKeyword.code(cxt, ruleType);
    },
  });
}
