/**
 * Kubernetes Secrets in YAML (`kubectl get secret -o yaml`, a manifest, a Helm release's): every
 * value of their `data:` and `stringData:` is a secret, whatever its key is named. The patterns
 * read a value by its key's name (`password`, `api-key`) and the entropy step by its length, so a
 * chart's `key: dTBrRGg5Y3dhMkxDeWtXUA==`, `root-user-key`, `htpasswd` (24 to 28 characters of
 * base64 under names no pattern knows) reached the model. Kept: `tls.crt` and `ca.crt`, a
 * certificate (public). JSON (`-o json`) is read by the JSON pass (redact-json.ts), which asks
 * {@link secretManifestValues} of the document it parsed.
 */

/** The keys of a Secret's data whose values are public: certificates. */
const PUBLIC_KEYS = new Set(['tls.crt', 'ca.crt']);

/** A line naming the mapping a Secret: `kind: Secret`, first of a list item or not. */
const KIND_SECRET = /^( *(?:- +)?)kind: +Secret *$/;

/** A line opening a mapping's data: `data:` or `stringData:` alone. Both capture what comes before the key: its column. */
const DATA = /^( *(?:- +)?)(?:data|stringData): *$/;

/** A key and its value in a data block: the key and what stays (its colon and spaces), then the value. */
const ENTRY = /^( +)([^\s:#][^:]*?: +)(.+)$/;

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** Where the mapping holding line `at` (whose keys are at `indent`) starts and ends, in lines. */
function mappingOf(lines: readonly string[], at: number, indent: number): readonly [number, number] {
  const outside = (line: string) => line.trim() !== '' && (indentOf(line) < indent || line.startsWith('---'));
  // A list item's first key is written after its `- `: the mapping starts there.
  const opensItem = (line: string) => indentOf(line) === indent - 2 && line.trimStart().startsWith('- ');
  let start = at;
  while (start > 0 && !outside(lines[start]!) && !opensItem(lines[start]!) && !outside(lines[start - 1]!)) start--;
  let end = at + 1;
  while (end < lines.length && !outside(lines[end]!) && !opensItem(lines[end]!)) end++;
  return [start, end];
}

/** `text` with the values of its Secrets' data redacted as `marker`; `text` itself when it holds none. */
export function redactSecretManifests(text: string, marker: string): string {
  if (!text.includes('kind: Secret')) return text;
  const lines = text.split('\n');
  let changed = false;
  // The end of the last mapping read: a `kind: Secret` inside it is not read again (linear in the text).
  let readTo = 0;
  for (let i = 0; i < lines.length; i++) {
    const kind = i < readTo ? null : KIND_SECRET.exec(lines[i]!);
    if (!kind) continue;
    const indent = kind[1]!.length;
    const [start, end] = mappingOf(lines, i, indent);
    readTo = end;
    for (let j = start; j < end; j++) {
      const data = DATA.exec(lines[j]!);
      if (!data || data[1]!.length !== indent) continue;
      // The block: the lines after it indented deeper; its keys at the first one's indent, a value's
      // further lines (a block scalar, `|`) deeper still, each redacted whole unless its key's is public.
      let keys = -1;
      let publicValue = false;
      for (let k = j + 1; k < end; k++) {
        const line = lines[k]!;
        if (line.trim() === '') continue;
        const at = indentOf(line);
        if (at <= indent) break;
        if (keys < 0) keys = at;
        const entry = at === keys ? ENTRY.exec(line) : null;
        if (entry) {
          const name = entry[2]!.slice(0, entry[2]!.indexOf(':')).replace(/^["']|["']$/g, '');
          publicValue = PUBLIC_KEYS.has(name);
          if (publicValue || /^[|>][-+]?$/.test(entry[3]!.trim())) continue;
          const quote = /^["']/.test(entry[3]!) ? entry[3]![0]! : '';
          lines[k] = `${entry[1]}${entry[2]}${quote}${marker}${quote}`;
          changed = true;
        } else if (at > keys && !publicValue) {
          lines[k] = `${' '.repeat(at)}${marker}`;
          changed = true;
        }
      }
    }
  }
  return changed ? lines.join('\n') : text;
}

/** The most objects of a parsed JSON document walked for Secrets (a document of more is left to the other checks past them). */
const MAX_WALKED = 100_000;

/**
 * The string values of the `data` and `stringData` of the Secrets in a parsed JSON document
 * (`kubectl get secret -o json`, one Secret or a List's `items`), but `tls.crt` and `ca.crt`; undefined when it holds none.
 */
export function secretManifestValues(parsed: unknown): ReadonlySet<string> | undefined {
  let values: Set<string> | undefined;
  const stack: unknown[] = [parsed];
  for (let walked = 0; stack.length > 0 && walked < MAX_WALKED; walked++) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    const object = node as Record<string, unknown>;
    if (object.kind === 'Secret') {
      for (const data of [object.data, object.stringData]) {
        if (typeof data !== 'object' || data === null || Array.isArray(data)) continue;
        for (const [name, value] of Object.entries(data as Record<string, unknown>)) if (typeof value === 'string' && value !== '' && !PUBLIC_KEYS.has(name)) (values ??= new Set()).add(value);
      }
    }
    for (const value of Object.values(object)) if (typeof value === 'object' && value !== null) stack.push(value);
  }
  return values;
}
