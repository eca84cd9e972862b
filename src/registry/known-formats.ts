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

/**
 * ajv-formats' `url` regular expression (3.0, a JavaScript one, not RE2) with its user info
 * `(?:\S+(?::\S*)?@)?` written `(?:\S+@)?`, which matches the same strings (`\S` holds `:`): as
 * written, every split of the text at a `:` was tried before the host, so "http://" and "a:"
 * 40,000 times (80 KB) took 2.8 s of the event loop every tenant shares, 160 KB 7-10 s (quadratic:
 * a 1 MiB argument, minutes); now a few ms.
 */
export const LINEAR_URL =
  /^(?:https?|ftp):\/\/(?:\S+@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$/iu;

/** Checks `format: "url"` with {@link LINEAR_URL}; Ajv writes the expression into the compiled code. */
export function useLinearUrlFormat(ajv: Ajv2020): void {
  ajv.addFormat('url', LINEAR_URL);
}
