/**
 * The forms in which a key named like a secret is followed by its value, as the text patterns of
 * secret-patterns.ts read them: what may stand between the key and its value ({@link separator}),
 * and how far the value runs ({@link keyedValue}). Every repetition is bounded and every repeated
 * class is disjoint from what follows it, so that a failed attempt backtracks a bounded distance
 * (test/middleware/redaction-redos.test.ts, redaction-attribute-forms.test.ts).
 */

/** The lookbehinds of the forms below, each written by {@link behind}: {@link loosen} leaves them out. */
const LOOKBEHINDS: string[] = [];

/** A lookbehind on `source`, registered for {@link loosen}. */
function behind(source: string): string {
  const lookbehind = `(?<=${source})`;
  LOOKBEHINDS.push(lookbehind);
  return lookbehind;
}

/**
 * `source` without the lookbehinds of the forms below: a superset of its matches, for the
 * pre-check scan (redact-secrets.ts). A lookbehind near a pattern's start costs that scan on every
 * character of every output, matched or not (V8 gives up its skip-ahead over the text): with them,
 * the pre-check of an 8 KB HTML page without secrets took 15% longer, its whole redaction 7%.
 */
export function loosen(source: string): string {
  return LOOKBEHINDS.reduce((out, lookbehind) => out.split(lookbehind).join(''), source);
}

/** A quote around a key or a value; escaped (`\"password\":\"...\"`, JSON inside a JSON string or a quoted excerpt) or not. */
export const QUOTE = String.raw`\\?["'` + '`' + ']';

/**
 * A command line's flag and its value after one space (`--password hunter2`, `-token abc`): the
 * key ends a word that `-` or `--` opens. Another flag is no value (`psql --password --host db`).
 */
export const FLAG_SPACE = String.raw` (?<=(?:^|[\s"'=(])--?[\w-]{0,64} )(?!-)`;

/**
 * A flag and its value as items of a list (`["--password", "hunter2"]`: a JSON argv, Docker's and
 * Kubernetes' `args:` and `command:`, also one item a line): the key ends a quoted item that `-`
 * or `--` opens, the value is the next quoted item. Another flag is no value
 * (`["--password", "--host", "db"]`). {@link LIST_ITEM_GAP} is what comes before the value's quote.
 */
export const LIST_ITEM_GAP = behind(String.raw`\\?["']--?[\w-]{0,64}`) + String.raw`\\?["']\s{0,2},\s{0,64}`;
const LIST_ITEM = String.raw`${LIST_ITEM_GAP}\\?["'](?!-)`;

/**
 * A flag and its value as items of a YAML block list, one a line (`- --password` then
 * `- hunter2`), unquoted or quoted (`- "--password"`); another flag is no value.
 */
export const YAML_ITEM = behind(String.raw`(?:^|\n)[ \t]{0,32}-[ \t]{1,4}["']?--?[\w-]{0,64}`) + String.raw`["']?\r?\n[ \t]{0,32}-[ \t]{1,4}["']?(?!-)`;

/** A double quote written as an entity, without its `&`: `quot;`, `#34;` (`#034;`, JSTL's), `#x22;`. */
const DOUBLE_QUOTE_NAME = '(?:quot|#0?34|#[xX]22);';

/** A single quote written as an entity, without its `&`: `apos;`, `#39;` (`#039;`, PHP's), `#x27;` (Python's). */
const SINGLE_QUOTE_NAME = '(?:apos|#0?39|#[xX]27);';

/** A quote written as an entity, without its `&`: either kind ({@link DOUBLE_QUOTE_NAME}, {@link SINGLE_QUOTE_NAME}). */
const ENTITY_QUOTE_NAME = `(?:${DOUBLE_QUOTE_NAME}|${SINGLE_QUOTE_NAME})`;

/** A quote written as an entity, as HTML escapes an attribute's quotes (`&quot;`, `&#34;`, `&#x22;`, `&#39;`, `&apos;`). */
export const ENTITY_QUOTE = `&${ENTITY_QUOTE_NAME}`;

/** The kinds of quote entities, without their `&`: a value quoted by one ends at the same kind. */
export const ENTITY_QUOTE_KINDS = [DOUBLE_QUOTE_NAME, SINGLE_QUOTE_NAME] as const;

/**
 * A character of text quoted by entities of the kind `name` ({@link ENTITY_QUOTE_KINDS}): any but
 * `<`, a line end, `excluded` or an entity of that kind, so `&quot;...&quot;` may hold `&#39;`
 * (HTML-escaped `"it's"`) and `&#39;...&#39;` may hold `&quot;`.
 */
export const entityText = (name: string, excluded = '') => String.raw`(?:[^&<\r\n${excluded}]|&(?!${name}))`;

/**
 * The attributes of a start tag after its name or after an attribute (`attr="x" id='y'`): at most
 * 8, each value at most 256 characters on its line, quotes escaped or not, or written as entities
 * as HTML escapes them ({@link ENTITY_QUOTE}: `id=&quot;x&quot;`, `id=&#34;x&#34;`,
 * `id=&#39;x&#39;`), a value ending at an entity of its opening one's kind.
 */
export const ATTRIBUTES = String.raw`(?:\s{1,16}[\w:.-]{1,64}=(?:\\?"[^"<>\r\n]{0,256}\\?"|\\?'[^'<>\r\n]{0,256}\\?'|${ENTITY_QUOTE_KINDS.map((name) => `&${name}${entityText(name, '>')}{0,256}&${name}`).join('|')})){0,8}`;

/** An attribute's quote: escaped or not, or an entity ({@link ENTITY_QUOTE}, HTML-escaped output). */
export const ATTRIBUTE_QUOTE = String.raw`(?:\\?["']|${ENTITY_QUOTE})`;

/**
 * The end of an XML element's start tag (`<password>`, `<cfg:password>`, `<password attr="x">`):
 * the key ends the name of a tag that `<` opens; attributes may follow it.
 */
export const ELEMENT = behind(String.raw`<[\w.:-]{0,64}`) + String.raw`${ATTRIBUTES}\s{0,16}>`;

/** The same start tag, its brackets escaped as HTML writes XML it shows (`&lt;password&gt;`). */
export const ESCAPED_ELEMENT = behind(String.raw`&lt;[\w.:-]{0,64}`) + String.raw`${ATTRIBUTES}\s{0,16}&gt;`;

/**
 * A key named in an attribute `name` or `key` whose value is in the attribute `value` of the same
 * tag (Spring's and Hibernate's `<property name="password" value="..."/>`, .NET's
 * `<add key="DbPassword" value="..." />`, `<param name=...>`), other attributes between, their
 * quotes entities too (`<add key=&quot;DbPassword&quot; value=&quot;...&quot;/>`, `&#34;` or
 * `&#39;` in HTML-escaped output). The key ends the name's attribute (`PasswordLength`,
 * `password.policy` name settings about passwords). The value first (`<add value="..."
 * key="Password"/>`) is secret-patterns.ts'.
 */
export const NAMED_ATTRIBUTE = behind(String.raw`\b(?:name|key)=${ATTRIBUTE_QUOTE}[\w.:/-]{0,64}`) + String.raw`${ATTRIBUTE_QUOTE}${ATTRIBUTES}\s{1,16}value=${ATTRIBUTE_QUOTE}`;

/**
 * A key named in an attribute `name` or `key` whose value is the element's text (Java's
 * properties XML `<entry key="api.token">...</entry>`, Log4j's `<Property name="password">`), or
 * the text of a `<value>` element inside it (Spring's `<property name="password"><value>`), quotes
 * entities too. Not in an HTML anchor or input (`<a name="password">Password</a>`).
 */
export const NAMED_TEXT = behind(String.raw`<(?!input\b)[\w.:-]{2,64}\s{1,16}(?:name|key)=${ATTRIBUTE_QUOTE}[\w.:/-]{0,64}`) + String.raw`${ATTRIBUTE_QUOTE}${ATTRIBUTES}\s{0,16}>(?:\s{0,64}<value>)?`;


/**
 * A password's `:` at its line's end, and the indent of its value on the next line (YAML's plain
 * scalar continued, `password:` then `  hunter2`, or a block scalar, `password: |`); not a nested
 * map, a list, a comment, an anchor or a flow collection (`-`, `#`, `&`, `*`, `!`, `{`, `[`). The
 * value must then end its line (redact-secrets.ts): `  secretKeyRef:` and `  Login failed` are no
 * password.
 */
export const NEXT_LINE = String.raw`["']?[ \t]{0,16}:[ \t]{0,16}(?:[|>][-+]?[ \t]{0,16})?\r?\n[ \t]{1,32}(?![-#&*!{[|>])["']?`;

/** A space or a tab, the tab maybe escaped (`\t` in a JSON string). */
const ESCAPED_SPACE = String.raw`(?:[ \t]|\\t)`;

/**
 * {@link NEXT_LINE} with its line break escaped, as a JSON string or a quoted log field holds YAML
 * (`"db:\n  password:\n    hunter2"`), quotes and tabs escaped or not. The value must then end
 * at an escaped line break or where its string ends (redact-secrets.ts): `\n  Login failed` and
 * `\nuser: bob` are no password.
 */
export const ESCAPED_NEXT_LINE =
  String.raw`(?:\\?["'])?${ESCAPED_SPACE}{0,16}:${ESCAPED_SPACE}{0,16}(?:[|>][-+]?${ESCAPED_SPACE}{0,16})?(?:\\r)?\\n${ESCAPED_SPACE}{1,32}(?![-#&*!{[|>])(?:\\?["'])?`;

/** Between a key and its value: `:`, `=`, Go's `:=` or the `=>` of PHP, Perl and Ruby hashes; not a comparison (`password == null`). */
export const OPERATOR = '(?::=|=>|[:=])(?!=)';

/**
 * The space after a .netrc's `password` (`machine h login u password p`, on one line or several,
 * as curl, git and ftp read it), told from a sentence's by the `login` and its value before it.
 */
export const NETRC_SPACE = behind(String.raw`(?:^|\s)login\s{1,16}\S{1,256}\s{1,16}password`) + String.raw`[ \t\r\n]{1,16}`;

/**
 * The host of a .pgpass line (`host:port:database:user:password`, PostgreSQL's password file, `*`
 * for any) and its colon, the line's start before it: the text's, a line's, a JSON string's, or a
 * line after an escaped line end (`\n` in a JSON string, which the text pass reads first). A host
 * of digits alone is none: `10:15:30:123:done` is a time.
 */
export const PGPASS_HOST = behind(String.raw`(?:^|[\n"]|\\n)(?:\*|[A-Za-z0-9_.-]{0,252}[A-Za-z_.-][0-9]{0,252}):`);

/**
 * A quoted key, its operator and the opening quote of a value that starts with spaces, tabs or
 * line breaks, escaped or not (`{"password":"\n  hunter2"}`, `"password": " hunter2"`). The value
 * must then be one word before its closing quote (secret-context.ts, `isWording`): `"password":
 * "\n  must be at least 8 characters"` is a message.
 */
export const SPACED_QUOTED_VALUE = String.raw`${QUOTE}[ \t]{0,16}${OPERATOR}[ \t]{0,16}${QUOTE}(?:[ \t]|\\[nrt]){1,32}`;

/**
 * A key's closing quote (or print_r's `]`: `[password] => hunter2`), the {@link OPERATOR} and the
 * value's opening quote, with spaces of class `space` around the operator (`'password' => '...'`);
 * or a flag's space ({@link FLAG_SPACE}), or what stands between a flag and its value as list items
 * ({@link LIST_ITEM}, {@link YAML_ITEM}); or a start tag's end ({@link ELEMENT},
 * {@link ESCAPED_ELEMENT}); or what stands between a key named in an attribute and its value
 * ({@link NAMED_ATTRIBUTE}, {@link NAMED_TEXT}). A backslash without a quote is the value's
 * (`password:\nOK`, an escaped line break, is no value `nOK`).
 */
export const separator = (space: string) =>
  `(?:(?:${QUOTE}|\\])?${space}*${OPERATOR}${space}*(?:${QUOTE})?|${FLAG_SPACE}(?:${QUOTE})?|${LIST_ITEM}|${YAML_ITEM}|${ELEMENT}|${ESCAPED_ELEMENT}|${NAMED_ATTRIBUTE}|${NAMED_TEXT})`;

/**
 * A value after a key, up to what delimits it in the text around it: a space, a quote, `&`, `,`,
 * `;`, `<>`. A backslash goes with the character after it (JSON's `\\` and `\n`), except a quote:
 * `\"` ends the value as `"` does. Brackets are part of it only while balanced (redact-secrets.ts,
 * `valueLength`): the `}` closing a JSON object, or the `)` of a call, ends it.
 */
export const value = (min: number) => String.raw`(?:[^\s"'` + '`' + String.raw`&,;<>\\]|\\[^\s"'` + '`' + `]){${min},4096}`;

/**
 * The value after a key's separator: after `value="` ({@link NAMED_ATTRIBUTE}), the attribute's
 * whole value up to its quote on its line, spaces and entities too (`value="p&amp;ss"`; after
 * `value=&quot;` or `value=&#34;`, up to the next such entity, and after `value=&#39;` or
 * `value=&apos;` up to the next single quote's: {@link entityText}); after an
 * escaped start tag, the element's whole text up to its escaped end tag on its line; after a start
 * tag, the element's whole text up to its end tag on its line (`<passphrase>correct
 * horse</passphrase>`, `<password>p&amp;ss</password>`), and nothing else
 * (`useState<Password>(initial)` is a type argument, escaped or not); after any other separator, a
 * {@link value}.
 * The texts' classes exclude `<` (and the attribute's its quote), so that a failed attempt
 * backtracks at most 1,024 characters. Their lookbehinds, after the first character (where they
 * cost the pre-check scan less), stay in the loose forms: without them, a text was scanned at
 * every position the spaces before it backtrack to (`authorization:` and a MiB of spaces took
 * 13.6 s).
 */
export const keyedValue = (min: number) =>
  String.raw`(?:[^"<\r\n](?<=\svalue="[^"<\r\n])[^"<\r\n]{${min - 1},1023}(?=")|[^'<\r\n](?<=\svalue='[^'<\r\n])[^'<\r\n]{${min - 1},1023}(?=')|` +
  String.raw`(?:[^<&\r\n]|&(?!lt;))(?<=&gt;[^<\r\n])(?:[^<&\r\n]|&(?!lt;)){${min - 1},1023}(?=&lt;\/)|` +
  ENTITY_QUOTE_KINDS.map((name) => String.raw`[^&<\r\n](?<=\svalue=&${name}[^&<\r\n])${entityText(name)}{${min - 1},1023}(?=&${name})|`).join('') +
  String.raw`(?<!(?<!=)>|&gt;)${value(min)}|(?<=(?:<[\w.:-]{0,64}|["']|${ENTITY_QUOTE}|\s)>)[^<\r\n]{${min},1024}(?=<\/))`;
