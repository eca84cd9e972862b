import { isAlias, LineCounter, parseDocument, visit, type Document, type YAMLError } from 'yaml';
import { ConfigError } from './config-error';

/**
 * The yaml library's messages that end in source text (a stray token, a block scalar's header, a
 * tag, an escape): cut before it, as the excerpt is.
 */
const ENDS_IN_SOURCE = /^(Unexpected [\w-]+ token in YAML (?:stream|document)|Not a YAML token|Block scalar header includes extra characters|Could not resolve tag|Not a valid tag|Unresolved tag|Ordered maps must not include duplicate keys|Invalid escape sequence)\b.*$/s;

/** The yaml library's refusal of an anchor expanded too often (billion laughs), thrown by toJS. */
const EXCESSIVE_ALIASES = /^Excessive alias count/;

/**
 * A YAML syntax error as one message: where (line, column) and what. The yaml library's excerpt
 * of the source is left out: the line may hold a secret (a header's bearer token, an MCP server's
 * API key), and the message goes to stderr, kept in pod logs.
 */
function syntaxError(file: string, error: YAMLError): ConfigError {
  const [head = ''] = error.message.split('\n');
  const at = error.linePos?.[0];
  const what = head.replace(/ at line \d+, column \d+:?$/, '').replace(ENDS_IN_SOURCE, '$1');
  return new ConfigError(file, at ? `line ${at.line}, column ${at.col}` : '', what);
}

/** The offset of the first alias naming no anchor set before it (as the yaml library resolves them), if any. */
function unresolvedAlias(doc: Document): number | undefined {
  const anchors = new Set<string>();
  let offset: number | undefined;
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) {
        if (anchors.has(node.source)) return undefined;
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      }
      if (node.anchor) anchors.add(node.anchor);
      return undefined;
    },
  });
  return offset;
}

/**
 * The value of YAML `text` (YAML 1.2, keys unique), or a ConfigError naming `file`, where and what
 * is wrong, never the text there. A tag the schema lacks is an error too. Aliases are checked only
 * as the value is built, and the library's errors then say the alias's text: an unquoted secret
 * starting with `*` is such an alias.
 */
export function yamlValue(text: string, file: string): unknown {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length > 0) throw syntaxError(file, doc.errors[0]!);
  // Only a warning to the library, which keeps the rest of the value: an unquoted API key
  // `!kJ8...` was read as "", a header `!Bearer tok` as "tok".
  const unknownTag = doc.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED');
  if (unknownTag) {
    const { path } = syntaxError(file, unknownTag);
    throw new ConfigError(file, path, 'Unresolved tag; put a value starting with ! in quotes');
  }
  try {
    return doc.toJS();
  } catch (error) {
    const offset = unresolvedAlias(doc);
    if (offset !== undefined) {
      const at = lines.linePos(offset);
      throw new ConfigError(file, `line ${at.line}, column ${at.col}`, 'an alias (*...) names no anchor (&...) set before it; put a value starting with * in quotes');
    }
    if (error instanceof Error && EXCESSIVE_ALIASES.test(error.message)) {
      throw new ConfigError(file, '', 'aliases expand to too many copies of an anchor (more than 100, counting the aliases inside it); write the repeated values out');
    }
    throw error;
  }
}
