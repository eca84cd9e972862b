import { ATTRIBUTE_QUOTE, ATTRIBUTES, ENTITY_QUOTE_KINDS, entityText, ESCAPED_NEXT_LINE, FLAG_SPACE, keyedValue, LIST_ITEM_GAP, loosen, NETRC_SPACE, NEXT_LINE, OPERATOR, PGPASS_HOST, separator, SPACED_QUOTED_VALUE, value } from './secret-forms';
import { passwordStatements } from './secret-statements';
import { API_KEY_FORMATS, webhookUrls } from './secret-token-formats';

/** The kinds of secret redaction names in `[REDACTED:kind]`. */
export type SecretKind =
  | 'private_key'
  | 'jwt'
  | 'github_token'
  | 'slack_token'
  | 'webhook'
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'api_key'
  | 'bearer'
  | 'authorization'
  | 'secret'
  | 'high_entropy';

/** A pattern whose match (or, with `keep`, the part after the first `keep` groups) is redacted. */
export interface SecretPattern {
  readonly kind: SecretKind;
  readonly regex: RegExp;
  /** Capture groups, from the first, that are kept in front of the marker (a key name, `Bearer `). */
  readonly keep: number;
  /** A key and its value: group 1 (the key, its quotes and separator) stays, group 2 is the value. */
  readonly keyed?: boolean;
  /** A password's key and its value, redacted from {@link PASSWORD_MIN_CHARS} (a keyed pattern). */
  readonly password?: boolean;
  /** A key and its quoted value: group 1 (the key, its separator and opening quote) stays, group 2 is the quote, group 3 the value. */
  readonly quoted?: boolean;
  /** A value before its key: group 1 (`value="`) stays, group 2 is the value, group 3 the key's name. */
  readonly valueFirst?: boolean;
  /**
   * A password after what stays, group 1 (a short flag and its command, a .pgpass line's other
   * fields): group 2 is the value, kept when a reference or a placeholder.
   */
  readonly passwordAfter?: boolean;
  /**
   * The source of a superset of its matches under the `i` flag, for the one pre-check scan: a key's
   * camelCase start, which depends on case, is left out, and so are the lookbehinds of the forms
   * in secret-forms.ts (`loosen`).
   */
  readonly loose: string;
  /** A scan of its own the text must pass for the pattern to be tried, in place of the pre-check's (`loose` is its source; secret-statements.ts). */
  readonly words?: RegExp;
}

/** Key names of API keys: `api_key`, `x-api-key`, `apiKey`, `api-secret`, `api_token`. */
const API_KEY_NAMES = '(?:x-)?api[_-]?(?:key|secret|token)|apikey';

/**
 * Key names of passwords, whose values may hold spaces (a passphrase of words) or be short. `pass`
 * only after a name and `_` or `-` (`DB_PASS`, RabbitMQ's `RABBITMQ_DEFAULT_PASS`, `smtp-pass`):
 * alone it is as often a count or a verdict (`pass: 10`).
 */
const PASSWORD_NAMES = String.raw`password|passphrase|passwd|pwd|pass(?<=[^\W_][_-]pass)`;

/**
 * Shortest value redacted under a password's key: one character. A password is a human's choice,
 * often short (`DB_PASSWORD=root`, `{"password":"admin"}`), and has no format to tell it by, so
 * what is kept there is told by its form instead (placeholders, references, code, wording:
 * secret-context.ts).
 */
export const PASSWORD_MIN_CHARS = 1;

/**
 * Shortest value redacted under another secret's key (token, secret, api_key...): shorter ones
 * are most often ids or counts (`{"token":1234}`, `max_tokens: 100`).
 */
export const SECRET_MIN_CHARS = 8;

/**
 * Key names of other secrets. The tokens of pagination (next_token, page_token) are none: an agent
 * must pass them back as they are. Nor are a cookie's or a session id's: a cookie header is a list
 * of pairs (`consent=yes; sid=...`) whose value ends at the first `;`, and a session id is a handle
 * an agent passes back (a browser's, a kernel's); a random one is caught by its entropy. Azure's
 * connection strings name theirs AccountKey and SharedAccessKey: base64 whose slashes (three or
 * more in one key of six) make the entropy step take it for a path; so does AWS's secret access
 * key (SecretAccessKey in the CLI's and STS's JSON, aws_secret_access_key) one time in 25. And the
 * keys services name theirs with: Cloudflare's X-Auth-Key (and WordPress's AUTH_KEY salt), Datadog's
 * application key, New Relic's license key, a master key (Meilisearch's, Rails'), Azure API
 * Management's Ocp-Apim-Subscription-Key: hex, which the entropy step keeps as a hash. Not Helm's
 * `checksum/secret` annotation, a hash of the chart's Secret.
 */
const SECRET_NAMES =
  '(?:access|auth|refresh)[_-]?token|client[_-]?secret|secret[_-]?key[_-]?base|' +
  '(?:secret(?:[_-]?access)?|private|account|shared[_-]?access|signing|encryption|auth|application|license|master|subscription)[_-]?key|' +
  '(?<!(?:page|next|prev|previous|continuation|sync|resume)[_-]?)token|(?<!checksum\\/)secret|credentials?';

/**
 * Key names of an Authorization header (`Proxy-Authorization`, `X-Authorization` too), whose value
 * may be a raw token with no scheme (`Authorization: lin_api_...`). A scheme alone is a word, kept.
 * And `auth`: Docker's config.json keeps a registry's `"auth"` as base64 of `user:password`
 * (`basic_auth`, `x-auth` too; not `oauth`; a method's name, `{"auth":"client_credentials"}`, is a word).
 */
const AUTHORIZATION_NAMES = 'authorization|auth';

/**
 * Where a token made of `run` characters starts: not after one of them, unless that one follows a
 * backslash (`\n` written as an escape in a JSON string, `"a\neyJ..."`). One lookbehind, nested
 * rather than an alternation, which would cost V8 its fast scan for the literal that follows.
 */
const tokenStart = (run: string) => String.raw`(?<!(?<!\\)[${run}])`;

/**
 * Where a key name starts: not after a digit, nor after a letter unless the name starts in capitals
 * after it (camelCase: dbPassword, githubToken, DBPassword), a letter after a backslash being an
 * escape. So DB_PASSWORD= and GITHUB_TOKEN= are caught (`\b` is not there after `_`), while
 * "tokens=" and "passwords:" are no such key. Case matters, so the names are matched in any case
 * by {@link anyCase} rather than the `i` flag.
 */
const KEY_START = String.raw`(?<!(?<!\\)[0-9])(?!(?<=(?<!\\)[A-Za-z])[a-z])`;

/** `source` with each letter in either case: `[pP][wW][dD]`. */
const anyCase = (source: string) => source.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);

const SEPARATOR = separator(String.raw`\s`);

/** A pattern starting where `start` allows. */
function pattern(kind: SecretKind, start: string, core: string, flags: string, keep = 0): SecretPattern {
  return { kind, regex: new RegExp(start + core, flags), keep, loose: loosen(start + core) };
}

/** Where a key's loose form starts: anywhere but after a digit. */
const LOOSE_KEY_START = String.raw`(?<!(?<!\\)[0-9])`;

/**
 * A key named like a secret, its quotes and separator, then its value of {@link SECRET_MIN_CHARS}
 * or more. Its loose form starts anywhere but after a digit: an attempt that fails has scanned
 * fewer than 8 characters of value.
 */
function keyValue(kind: SecretKind, names: string): SecretPattern {
  const core = `((?:${anyCase(names)})${SEPARATOR})(${keyedValue(SECRET_MIN_CHARS)})`;
  return { ...pattern(kind, KEY_START, core, 'g', 1), keyed: true, loose: loosen(LOOSE_KEY_START + core) };
}

/**
 * A key named like a password, its quotes and separator on its line, then its value from
 * {@link PASSWORD_MIN_CHARS}. Neither the separator nor the value's start crosses a line end, an
 * escaped one (`\n` in a JSON string) too: after `password:` at a line's end comes YAML's nested
 * map or the next key (`password:\n  secretKeyRef:`, `password:\nuser: bob`), no password; but
 * an indented value that ends its line is one ({@link NEXT_LINE}, tried first: `password: |`
 * would otherwise take `|` for its value), its line break escaped too ({@link ESCAPED_NEXT_LINE}:
 * YAML in a JSON string, which the JSON pass reads only once the text pass found something); a
 * quoted value may start with whitespace ({@link SPACED_QUOTED_VALUE}: `{"password":"\n  hunter2"}`).
 */
function passwordKeyValue(): SecretPattern {
  const core = `((?:${anyCase(PASSWORD_NAMES)})(?:${NEXT_LINE}|${ESCAPED_NEXT_LINE}|${SPACED_QUOTED_VALUE}|${separator('[ \\t]')}|${NETRC_SPACE}))` + String.raw`(?!\\[nrt])` + `(${keyedValue(PASSWORD_MIN_CHARS)})`;
  return { ...pattern('secret', KEY_START, core, 'g', 1), keyed: true, password: true, loose: loosen(LOOSE_KEY_START + core) };
}

/**
 * A key named like a password, unquoted, its operator, a flag's space or what stands between list
 * items, then a value in quotes that holds a space: a passphrase of words
 * (`SMTP_PASSWORD="correct horse battery staple"` in a .env file or a shell, `passphrase: 'my pass
 * phrase'` in YAML, `gpg --passphrase "a b c"`, `["--passphrase", "a b c"]`, Perl's `password =>
 * 'a b'`). {@link passwordKeyValue} stops a value at its first space, so all its words
 * but the first were left. The value runs to its closing quote, never past it nor past a line end,
 * at most 4,096 characters; one with no space is left to passwordKeyValue, which runs after. A
 * quoted key is JSON's or a PHP array's, whose values with spaces are most often messages
 * (`{"password": "is too short (minimum is 8 characters)"}`, a validation error; Laravel's
 * `'password' => 'The provided password is incorrect.'`): kept, as the JSON pass keeps them.
 */
function quotedKeyValue(kind: SecretKind, names: string): SecretPattern {
  const gap = String.raw`(?:\s*${OPERATOR}\s*|${FLAG_SPACE}|${LIST_ITEM_GAP})`;
  const key = (quote: string) => `((?:${anyCase(names)})${gap}${quote})`;
  const quoted = String.raw`((?:(?!\2)(?:[^\n\\]|\\[^\n])){${PASSWORD_MIN_CHARS},4096})(?=\2)`;
  // The loose form has no back-reference: the scan joining every loose form numbers its groups anew.
  const loose = LOOSE_KEY_START + key(`["']`) + String.raw`[^\n]{${PASSWORD_MIN_CHARS}}`;
  return { kind, regex: new RegExp(KEY_START + key(`(["'])`) + quoted, 'g'), keep: 1, quoted: true, loose: loosen(loose) };
}

/**
 * A tag's `value` attribute before the attribute `key` or `name` naming a secret, other attributes
 * between (`<add value="..." key="Password"/>`, its quotes entities too: `value=&quot;...&quot;`,
 * `value=&#39;...&#39;`): the whole value on its line, as when the key comes first; quoted by
 * entities, up to the next one of its kind. The name must end its attribute (redact-secrets.ts
 * reads it with `keyKind`).
 */
function valueFirst(): SecretPattern {
  const names = anyCase(`${API_KEY_NAMES}|${PASSWORD_NAMES}|${SECRET_NAMES}`);
  const name = (start: string) => String.raw`(?:name|key)=${ATTRIBUTE_QUOTE}([\w.:/-]{0,64}${start}(?:${names}))${ATTRIBUTE_QUOTE}`;
  // After a quote, any character but quotes; after an entity (its `;`), any but an entity of its kind.
  const entityQuoted = ENTITY_QUOTE_KINDS.map((entity) => String.raw`(?<=&${entity})${entityText(entity, String.raw`"'\\`)}{1,1023}`).join('|');
  const quoted = String.raw`(?<=["'])[^"'<\r\n\\]{1,1023}|(?<=;)(?:${entityQuoted})`;
  const core = String.raw`(value=(?<=\svalue=)${ATTRIBUTE_QUOTE})(${quoted})(?=${ATTRIBUTE_QUOTE}${ATTRIBUTES}\s{1,16}${name(KEY_START)})`;
  // Loose, the name alone: a scan from every `value=` of a page cost its pre-check more.
  return { kind: 'secret', regex: new RegExp(core, 'g'), keep: 1, valueFirst: true, loose: name('') };
}

/**
 * Short flags whose value is a password by the tool's own convention, and only those: sshpass's
 * `-p` (`sshpass -p pw ssh ...`, attached too: getopt's), redis-cli's `-a`, and the MySQL
 * clients' `-p` attached (`mysql -proot`), a registry login's `-p` (`docker login -u me -p pw`,
 * podman's, nerdctl's, buildah's, `helm registry login`), and the password after the user of curl's
 * `-u`/`--user` (`curl -u admin:pw`). Not mysql's `-p secret`, which prompts for the password
 * and names the database `secret`, nor `-p` of other tools (a port, `mkdir -p`). The command is
 * read back on the flag's line, at most 256 characters, after the flag's `-` (a lookbehind there
 * costs the pre-check scan only at a `-`).
 */
function shortFlags(): SecretPattern {
  const command = (names: string) => String.raw`(?<![\w.-])(?:${names})(?:\.exe)?(?:[ \t][^\n|;&]{0,256})?[ \t]`;
  const mysql = 'mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump';
  const registries = 'docker|podman|nerdctl|buildah';
  const login = String.raw`(?:${registries})[ \t]{1,4}login|helm[ \t]{1,4}registry[ \t]{1,4}login`;
  // curl's user and password in one (`curl -u admin:pw`): the user and its colon stay.
  const user = String.raw`(?:u|-user)(?:[ \t]{1,4}|=)["']?[^\s:'"]{0,256}:`;
  const flag =
    String.raw`\bsshpass(?:[ \t]{1,4}-[vhe]){0,3}[ \t]{1,4}-p[ \t]{0,4}|-p(?<=${command(mysql)}-p)|-a(?<=${command('redis-cli')}-a)[ \t]{1,4}|` +
    String.raw`-p(?<=${command(login)}-p)[ \t]{1,4}|-${user}(?<=${command('curl')}-${user})`;
  const core = `((?:${flag})["']?)(${value(PASSWORD_MIN_CHARS)})`;
  // Loose, the commands' names (with their flag where the name is a common word): every `-` of a
  // text started the flags' form in the pre-check scan (an 8 KB HTML page took 11% longer to redact).
  return { kind: 'secret', regex: new RegExp(core, 'g'), keep: 1, passwordAfter: true, loose: String.raw`sshpass|mysql|mariadb|redis-cli|(?:${registries}|helm)[ \t][^\n]{0,256}-p|curl[ \t][^\n]{0,256}-(?:u|-user)` };
}

/**
 * A .pgpass line's password (`db.internal:5432:app:admin:S3cret`, on a line of its own): the host,
 * port (3 to 5 digits or `*`: a time's `:21:` is passed over at once), database and user stay. A field holding a space, quote or backslash (an
 * escaped `\:`), or a password running on past its line, is no such line.
 */
function pgpassLine(): SecretPattern {
  const field = String.raw`[^:\s\\"]{1,63}`;
  const core = String.raw`(:${PGPASS_HOST}(?:[0-9]{3,5}|\*):${field}:${field}:)([^:\s\\"]{1,256})(?=\r?\n|\\[rn]|"|$)`;
  return { kind: 'secret', regex: new RegExp(core, 'g'), keep: 1, passwordAfter: true, loose: loosen(core) };
}

/** The kinds of the values under keys named like secrets, for outputs read as JSON. */
export const SECRET_KEYS: ReadonlyArray<{ readonly kind: SecretKind; readonly name: RegExp }> = [
  { kind: 'api_key', name: new RegExp(`${KEY_START}(?:${anyCase(API_KEY_NAMES)})$`) },
  { kind: 'secret', name: new RegExp(`${KEY_START}(?:${anyCase(`${PASSWORD_NAMES}|${SECRET_NAMES}`)})$`) },
  { kind: 'authorization', name: new RegExp(`${KEY_START}(?:${anyCase(AUTHORIZATION_NAMES)})$`) },
];

const PASSWORD_KEY = new RegExp(`${KEY_START}(?:${anyCase(PASSWORD_NAMES)})$`);

/** Whether `key` names a password (`password`, `DB_PASSWORD`, `smtpPassword`, `x-pwd`), as {@link SECRET_KEYS} reads keys. */
export const isPasswordKey = (key: string): boolean => key.length <= 256 && PASSWORD_KEY.test(key);

const WORD_START = tokenStart('A-Za-z0-9_');
const DASHED_START = tokenStart('A-Za-z0-9_-');

/**
 * The patterns, most specific first. Each is linear-time: no nested or overlapping quantifiers,
 * every repeated class disjoint from what follows it, and each starts only where its first
 * character's run starts (a lookbehind on the run's own class, not `\b`: `-` is a word boundary
 * and a token character, so `-eyJ-eyJ...` started an attempt every 4 characters, each scanning
 * thousands). Test: the hostile inputs in test/middleware/redaction-redos.test.ts.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // Every repetition is bounded: a greedy loop over a whole MiB-long run cost V8 ~100 ms however
  // simple its class (measured), and a bounded one backtracks a bounded distance.
  pattern('jwt', DASHED_START, String.raw`eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,65536}\.[A-Za-z0-9_-]{0,4096}`, 'g'),
  pattern('github_token', WORD_START, '(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})', 'g'),
  // Slack's tokens, and an incoming webhook's path (hooks.slack.com/services/T.../B.../...): whoever
  // holds it posts to the channel, and its last part (24 characters) is too short for the entropy
  // step. The host stays (group 1, empty for a token; a lookbehind for it cost the scans a look at every `T`).
  pattern('slack_token', tokenStart('A-Za-z0-9-'), String.raw`(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,512}|(hooks\.slack\.com\/services\/)T[A-Z0-9]{6,16}\/B[A-Z0-9]{6,16}\/[A-Za-z0-9]{16,64}`, 'g', 1),
  webhookUrls(tokenStart('A-Za-z0-9-')),
  pattern('aws_access_key', WORD_START, String.raw`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`, 'g'),
  pattern('aws_secret_key', WORD_START, String.raw`((?:aws_?)?secret_?access_?key${SEPARATOR})[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])`, 'gi', 1),
  pattern('api_key', DASHED_START, `(?:${API_KEY_FORMATS})(?![A-Za-z0-9])`, 'g'),
  // An age private key (Bech32, upper case): 58 characters of a 32-letter alphabet, not of base64.
  pattern('private_key', WORD_START, 'AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}(?![A-Za-z0-9])', 'g'),
  pattern('bearer', WORD_START, String.raw`(Bearer\s+)[A-Za-z0-9._~+/-]{8,4096}={0,3}`, 'gi', 1),
  pattern('authorization', WORD_START, String.raw`((?:authorization|auth)${SEPARATOR}(?:Basic|Token|Digest)\s+)[A-Za-z0-9._~+/-]{6,4096}={0,3}`, 'gi', 1),
  // After `Bearer ` and `Basic ` have been replaced: a scheme left is a word, or too short.
  keyValue('authorization', AUTHORIZATION_NAMES),
  quotedKeyValue('secret', PASSWORD_NAMES),
  passwordKeyValue(),
  keyValue('api_key', API_KEY_NAMES),
  keyValue('secret', SECRET_NAMES),
  valueFirst(),
  shortFlags(),
  pgpassLine(),
  // A URL's credentials, both kept in one pattern (one entry: test/middleware/redaction-redos.test.ts
  // holds hostile inputs by entry). The password of its user (postgres://admin:S3cret@db/app): the
  // scheme and user stay. Its slashes may be escaped (`postgres:\/\/`, as PHP writes JSON; twice in
  // JSON inside JSON), so that JSON no parser reads (JSON lines, cut short, quoted in a log) still
  // shows it. No quote or backslash in it (a URL has them encoded), so it never spans two JSON
  // strings; no bracket in the user (redis://[:password@]host is a usage line). The user may be
  // empty: redis://:PASSWORD@host is how Redis URLs (and dispatch's own --redis) carry a password.
  // Or an Azure shared access signature in its query (`&sig=`, `&amp;sig=` in HTML), or an S3 or GCS
  // presigned URL's (`X-Amz-Signature=`, `X-Goog-Signature=`, hex, which the entropy step keeps as a
  // hash): whoever holds the URL may use the object until it expires. Azure's base64 is
  // percent-encoded (%2B, %2F, %3D), so the entropy step saw only the short runs between the escapes.
  pattern(
    'secret',
    '',
    String.raw`\b([a-z][a-z0-9+.-]{1,20}:(?:\\{0,8}\/){2}[^\s:/@[\]]{0,256}:)[^\s@/"\\]{1,256}(?=@)|([?&;](?:sig|X-Amz-Signature|X-Goog-Signature)=)[A-Za-z0-9%+/=_-]{16,512}`,
    'gi',
    2,
  ),
  passwordStatements(),
];
