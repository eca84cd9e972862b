/**
 * What the text around a secret-like value says about it: the checks that keep values which only
 * look like secrets (redaction of them broke source code, paths and pagination for the agent).
 */

/** A key named `..._pass` (`DB_PASS`; not `password`, nor `pass` inside a word). */
const PASS_KEY = String.raw`(?:^|[_-])pass\b`;

/** Key names whose value a human chose: even a plain word after them is a secret. */
const PASSWORD_NAME = new RegExp(`passw(?:or)?d|passphrase|pwd|${PASS_KEY}`, 'i');

/** Ends of key names (lowercase, letters and digits only) whose values identify or page. */
const OPAQUE_KEY =
  /(?:(?:next|page|prev|previous|continuation|pagination|sync|resume)token|cursor|marker|continue|after|before|scrollid|integrity|etag|checksum|digest|hash|sha\d*|md5|uid|guid|ids?|fingerprint|publickey|cabundle|certificate(?:authority)?data|nonce)$/;

const SECRET_WORDS = new Set(['TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'PASSPHRASE', 'PWD', 'PASS', 'KEY', 'CREDENTIAL', 'CREDENTIALS']);

/**
 * The name of an environment variable holding a secret (`DB_PASSWORD`, `DISPATCH_TOKEN`): split
 * rather than one regular expression, whose `(_[A-Z0-9]+)*_KEY` backtracked quadratically.
 */
function isEnvName(value: string): boolean {
  if (value.length > 64 || !/^[A-Z][A-Z0-9_]*$/.test(value)) return false;
  const words = value.split('_');
  return words.every((w) => w !== '') && words.slice(1).some((w) => SECRET_WORDS.has(w));
}

/** Words in a key that make its value one to hide all the same (Vault's secret_id, a session id). */
const SECRET_WORD = /secret|session|passw|passphrase|auth|credential|private/;

/**
 * What a tool writes in a secret's place: a value left out (`null`, `~`, `none`, Perl's `undef`,
 * `N/A`), a flag (`true`), a mask (`***`, `[REDACTED]`, Rails' `[FILTERED]`, `<redacted>`, a marker
 * an excerpt cut, `[RED...`), what a schema or an API doc writes (`string`, `str`, `required`,
 * `optional`; Laravel's validation rules, `required|min:8`), a template (`{{ .Values.password }}`,
 * `{password}`), a query's parameter (`?`, `%s`) or a sample config's (`password_here`, as
 * WordPress's wp-config-sample.php writes them, and its `put your unique phrase here`).
 */
const PLACEHOLDER =
  String.raw`(?:null|nil|none|undef|undefined|true|false|n\/?a|empty|unset|required|optional|(?:required|nullable|sometimes)\|[\w:.|]*|string|str|bytes|%s|(?:[a-z]+_)+here|put your unique phrase here|[*~?|.-]+|\[(?:redacted|filtered|hidden|masked)\b[^\]]{0,32}\]|\[[A-Za-z_:]{0,24}\.\.\.|<[^<>]{0,64}>|\{\{.*|\{%.*|\{[A-Za-z_][\w.]{0,64}\})$`;

/**
 * A key named `..._pass` (not `password`), whose value is a count or a verdict: `tests_pass: 10`,
 * `LINT_PASS=1`, `{"all_pass": "yes"}` are a test report's, where a password of 4 digits or fewer
 * is rare. Under `DB_PASS` a longer number or any other word is still a password.
 */
const PASS_COUNT_KEY = new RegExp(PASS_KEY, 'i');
const PASS_COUNT = /^(?:\d{1,4}|yes|no|ok)$/i;

/** A reference, a path, a URL or a placeholder: one expression, as it is tested for every value a key names. */
const PLAIN = new RegExp(String.raw`^(?:\$|\/|~\/|\.\.?\/|[A-Za-z]:\\|[a-z][a-z0-9+.-]*:\/\/|${PLACEHOLDER})`, 'i');

/**
 * A value that points to something, stands for none, or is a word, rather than being a secret:
 * `${DB_PASSWORD}`, `$TOKEN`, `$(openssl rand -hex 32)`, a path (`PWD=/home/alice`, `~/x`, `./x`,
 * `C:\x`), a URL (whose password, if any, has a pattern of its own), the name of a variable
 * (`DB_PASSWORD`), a placeholder (`null`, `***`, `string`: {@link PLACEHOLDER}), or, after a key
 * that is not a password's, a word (`{"token":"understanding"}`, `same-origin`).
 */
export function isPlainValue(key: string, value: string): boolean {
  if (PLAIN.test(value) || isEnvName(value)) return true;
  if (PASS_COUNT_KEY.test(key) && PASS_COUNT.test(value)) return true;
  return !PASSWORD_NAME.test(key) && value.length <= 32 && /^(?:[a-z]+(?:[-_][a-z]+)*|[A-Z][a-z]+)$/.test(value);
}

const DECLARATION = /(?:^|[^\w$])(?:const|let|var|val|final|readonly|private|public|protected)\s+(?:[\w$<>[\]]+\s+)?[\w$]*$/;
const IDENTIFIER_PATH = /^[A-Za-z_$][\w$]*(?:(?:\.|\?\.|::)[A-Za-z_$][\w$]*)*/;
const LETTERS_PATH = /^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+$/;
/** A variable named like a secret: the name as a word of it (db_password, accessToken, $secret). */
const SECRET_NAME = /(?:^|[_$]|(?<=[a-z])(?=[A-Z]))(?:[Tt]oken|TOKEN|[Ss]ecret|SECRET|[Pp]ass(?:wor)?d|PASS(?:WOR)?D|[Pp]assphrase|PASSPHRASE|[Cc]redential|CREDENTIAL|[Aa]pi_?[Kk]ey|API_?KEY)/;
const CODE_AFTER = /^\s*[;,)|&?=>\]}<{]/;

const IDENTIFIER_CHAR = /[\w$]/;

/** A bare name before `=>` and a value without quotes: an arrow function's parameter (`password => password.trim()`). */
const ARROW_PARAMETER = /^[\w$]+[ \t]*=>[ \t]*$/;

/** A bracket the value opens and does not close: a list or a map whose items follow (`'password' => ['required', 'min:8']`). */
const STRUCTURE_START = /^(?:\[[^\]]*|\{[^}]*|\([^)]*)$/;

/**
 * Whether the key at `keyStart` is declared (`const token = ...`, `private String password = ...`).
 * The name's start must follow a space, checked first: the expression costs ~0.2 µs, paid by every
 * short password (a MiB of `pwd=a&` holds 175,000).
 */
function isDeclared(text: string, keyStart: number): boolean {
  let i = keyStart;
  while (i > 0 && keyStart - i < 64 && IDENTIFIER_CHAR.test(text[i - 1]!)) i--;
  return i > 0 && /\s/.test(text[i - 1]!) && DECLARATION.test(text.slice(Math.max(0, keyStart - 64), keyStart));
}

/**
 * Whether an unquoted value after a key is code rather than a secret: an expression on the right
 * of a declaration (`const token = header.slice(7);`), a property path (`options.password`,
 * `process.env.DB_PASSWORD`, `tokens.yaml`), a call or an index (`getToken()`, `argv[3]`), an
 * arrow function ({@link ARROW_PARAMETER}), the start of a list or a map ({@link STRUCTURE_START}),
 * after `=>` a variable named like a secret (`'password' => password`), or, after `:` or a spaced
 * `=`, such a variable (`password = dbPassword`) or a name followed by code punctuation
 * (`privateKey: KeyObject;`, `(token: Principal)`). `API_KEY=sk-...`,
 * `password: hunter2`, `Password=abc;` (a connection string) and quoted values stay secrets: under
 * a password's key from one character, under other secrets' keys from 8 (shorter ones are kept as
 * ids or counts, docs/security.md).
 */
export function isCode(text: string, keyStart: number, key: string, value: string, valueEnd: number): boolean {
  if (/["'`](?:[ \t]|\\[nrt])*$/.test(key)) return false;
  const path = IDENTIFIER_PATH.exec(value)?.[0] ?? '';
  if (path === '' && STRUCTURE_START.test(value)) return true;
  if (path === value && LETTERS_PATH.test(value)) return true;
  // A call or an index, unless a closed group is followed by more of the value (`ab(cd)efgh`).
  const rest = value.slice(path.length);
  if (path !== '' && /^[([]/.test(rest) && !/^[([][^()[\]]*[)\]][^.()[\]]/.test(rest)) return true;
  if (isDeclared(text, keyStart)) return true;
  if (/=>\s*$/.test(key)) return ARROW_PARAMETER.test(key) || (path === value && SECRET_NAME.test(value));
  if (!/(?::|\s=)\s*$/.test(key)) return false;
  if (path === value && SECRET_NAME.test(value)) return true;
  return /^[A-Za-z_$]+$/.test(value) && CODE_AFTER.test(text.slice(valueEnd, valueEnd + 64));
}

/**
 * A key and its value both quoted, as JSON (`"password": "`, `\"password\":\"`) or a PHP array
 * (`'password' => '`) writes them, the value's opening quote (group 1) maybe followed by
 * whitespace, escaped or not (`"password":"\n  `).
 */
const QUOTED_KEY_AND_VALUE = /["'`]\s*(?:=>|[:=])\s*\\?(["'`])(?:[ \t]|\\[nrt])*$/;

/** `text` without the whitespace at its end, escaped (`\n`, `\t`) or not (a loop: `(?:\s|\\n)+$` would rescan a run of spaces from each of them). */
function trimSpaceEnd(text: string): string {
  let end = text.length;
  for (;;) {
    if (end > 0 && /\s/.test(text[end - 1]!)) end--;
    else if (end > 1 && text[end - 2] === '\\' && 'nrt'.includes(text[end - 1]!)) end -= 2;
    else return text.slice(0, end);
  }
}

/** Words that open a sentence rather than being a password (`Password: The password of the user`). */
const SENTENCE_WORD = /^(?:the|a|an|is|are|was|must|should|will|can|cannot|may|to|for|of|your|be|not|this|that|enter|if|when|and|or|in|with|from|by|as|at)$/i;

/** A flag's key (`--password `, `--password "`): the name, one space and maybe a quote; no `:`, `=` or `>`. */
const FLAG_KEY = /^[^:=>]* \\?["'`]?$/;

/**
 * What follows a flag in help and prose, not its value: a metavar (argparse's `--password
 * PASSWORD`, click's `TEXT`, OpenSSL's `-password val`), a word naming flags (`the --password
 * flag`, `--http-password options`) or a sentence's.
 */
const FLAG_WORD = /^(?:[A-Z][A-Z_-]+|val|value|arg|flags?|options?|switch(?:es)?|arguments?|parameters?)$/;

/**
 * Whether the short value after a password's key, which ends at `valueEnd`, is the first word of
 * wording rather than a password: of a quoted value with a space after a quoted key (JSON's
 * validation message, `{"password": "is too short"}`, `"can't be blank"`: the JSON pass keeps it
 * whole; Laravel's, `'password' => 'The provided password is incorrect.'`; a word after
 * whitespace at the value's start, `"\n  must be set"`, but not whitespace before its close), after a flag
 * ({@link FLAG_WORD}), or of a sentence (`password: must be at least 8 characters`, docs and help
 * texts; `<password>The password of the user</password>`, an element's whole text).
 */
export function isWording(text: string, key: string, value: string, valueEnd: number): boolean {
  const quote = QUOTED_KEY_AND_VALUE.exec(key)?.[1];
  if (quote !== undefined) {
    // Read up to the closing quote, at most 256 characters: matches may follow one another closely.
    // Whitespace just before it ends the value (`"\n  hunter2\n"`); a word after it is wording.
    const rest = text.slice(valueEnd, valueEnd + 256);
    const close = rest.indexOf(quote);
    return /\s/.test(close < 0 ? rest : trimSpaceEnd(rest.slice(0, close)));
  }
  if (FLAG_KEY.test(key) && (FLAG_WORD.test(value) || SENTENCE_WORD.test(value))) return true;
  // The first word, then a space and a letter: in the value (an element's text) or after it.
  const space = value.indexOf(' ');
  if (!SENTENCE_WORD.test(space < 0 ? value : value.slice(0, space))) return false;
  return /^ [A-Za-z]/.test(space < 0 ? text.slice(valueEnd, valueEnd + 2) : value.slice(space, space + 2));
}

/** A word before a password's key that says there is none: the status line `no password: ok`. */
const NEGATION = /(?<![\w-])(?:no|without|empty|blank|missing)[ \t]{1,4}$/i;

/**
 * Whether the password's key at `keyStart` is negated (`no password: ok`, `without password:
 * skipped`): what follows it is a status, not a password. `password: ok` alone, `Your password:
 * hunter2` and `New password: abc` stay secrets.
 */
export function isNegated(text: string, keyStart: number): boolean {
  const before = text[keyStart - 1];
  // 16 characters hold the longest negation and its spaces, and the character before them.
  return (before === ' ' || before === '\t') && NEGATION.test(text.slice(Math.max(0, keyStart - 16), keyStart));
}

/** Whether values under `key` identify or page (`next_token`, `cursor`, `id`, `integrity`): no secret by their entropy alone. */
export function isOpaqueKey(key: string): boolean {
  if (key.length > 256) return false;
  const name = key.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
  return OPAQUE_KEY.test(name) && !SECRET_WORD.test(name);
}

const KEY_CHAR = /[\w.-]/;

/**
 * The key a value at `start` is written under, read backwards past its quotes (escaped or not),
 * `:` or `=` and spaces: `"NextToken": "AYAD...`, `cursor=...`. Empty when there is none.
 */
export function keyBefore(text: string, start: number): string {
  let i = start;
  const skip = (chars: string) => {
    while (i > 0 && start - i < 16 && chars.includes(text[i - 1]!)) i--;
  };
  skip('"\'\\ ');
  if (i === 0 || !':='.includes(text[i - 1]!)) return '';
  i--;
  skip('"\'\\ ');
  const end = i;
  while (i > 0 && end - i < 64 && KEY_CHAR.test(text[i - 1]!)) i--;
  return text.slice(i, end);
}

/**
 * Flags named like a password that take no value, and the commands they are of on their line:
 * PostgreSQL's clients' `--password` (`-W`, a prompt: `psql --password mydb` names the database)
 * and gpg's `--passwd` (an action on the user id that follows).
 */
const VALUELESS_FLAGS: ReadonlyArray<readonly [RegExp, RegExp]> = [
  [/^password $/, /(?<![\w.-])(?:psql|pg_dump|pg_dumpall|pg_restore|pg_basebackup|createdb|dropdb|createuser|dropuser|vacuumdb|reindexdb|clusterdb|pgbench)(?:\.exe)?[ \t]/],
  [/^passwd $/, /(?<![\w.-])gpg2?(?:\.exe)?[ \t]/],
];

/**
 * Whether the key at `keyStart` is a flag that takes no value (`--password ` of psql on its line,
 * read back at most 256 characters): what follows it is an argument of its own.
 */
export function isValuelessFlag(text: string, keyStart: number, key: string): boolean {
  if (!text.startsWith('--', keyStart - 2)) return false;
  const command = VALUELESS_FLAGS.find(([flag]) => flag.test(key))?.[1];
  if (command === undefined) return false;
  const before = text.slice(Math.max(0, keyStart - 256), keyStart);
  return command.test(before.slice(before.lastIndexOf('\n') + 1));
}

/** After print_r's `[password] =>`: `Array` or `ClassName Object`, then the nested array's `(` on the next line. */
const NESTED_ARRAY = /^(?: Object)?\r?\n[ \t]*\(/;

/** Whether the value after print_r's key (`[password] => Array`) opens a nested array or object rather than being one. */
export function isNestedArray(text: string, key: string, value: string, valueEnd: number): boolean {
  if (!/\]\s*=>\s*$/.test(key)) return false;
  const after = text.slice(valueEnd, valueEnd + 64);
  return NESTED_ARRAY.test(after) && (value === 'Array' || after.startsWith(' Object'));
}
