import { redactSecrets } from '../../src/middleware';
import { notLinearPast, slowRedactions } from './slow-redactions';

// Found in review: a key named like a secret was found before `:` and `=` only, so the forms other
// languages and tools write reached the model as written: PHP, Perl and Ruby hashes
// (`'password' => 'hunter2'`, print_r's `[password] => hunter2`), XML elements
// (`<password>hunter2</password>`) and command-line flags (`--password hunter2`). And a status line
// (`no password: ok`) lost its status, and a comparison (`if (password == null)`) its operand.

test.each<[string, string, string]>([
  ['a PHP array', "$db = ['user' => 'app', 'password' => 'hunter2'];", "$db = ['user' => 'app', 'password' => '[REDACTED:secret]'];"],
  ['a PHP array in double quotes', '"password" => "s3cr",', '"password" => "[REDACTED:secret]",'],
  ["PHP's print_r", 'Array\n(\n    [user] => app\n    [password] => hunter2\n)', 'Array\n(\n    [user] => app\n    [password] => [REDACTED:secret]\n)'],
  ['a Perl bareword key', "my %db = (password => 'hunter2', host => 'db');", "my %db = (password => '[REDACTED:secret]', host => 'db');"],
  ["Perl's Data::Dumper", "$VAR1 = {\n  'DB_PASSWORD' => 'root'\n};", "$VAR1 = {\n  'DB_PASSWORD' => '[REDACTED:secret]'\n};"],
  ['a Ruby symbol key', "conn = PG.connect(:user => 'app', :password => 'pw1')", "conn = PG.connect(:user => 'app', :password => '[REDACTED:secret]')"],
  ['a token in a PHP array', "'api_key' => 'abcd1234efgh5678', 'token' => 'zyxw9876vuts5432'", "'api_key' => '[REDACTED:api_key]', 'token' => '[REDACTED:secret]'"],
  ['an XML element', '<db><user>app</user><password>hunter2</password></db>', '<db><user>app</user><password>[REDACTED:secret]</password></db>'],
  ['an XML element, capitalised', '<Password>ab</Password>', '<Password>[REDACTED:secret]</Password>'],
  ['an XML element with a namespace prefix', '<cfg:password>hunter2</cfg:password>', '<cfg:password>[REDACTED:secret]</cfg:password>'],
  ['an XML element of a compound name', '<dbPassword>root</dbPassword>\n<smtp_password>mail1</smtp_password>', '<dbPassword>[REDACTED:secret]</dbPassword>\n<smtp_password>[REDACTED:secret]</smtp_password>'],
  ['an XML passphrase of words, whole', '<passphrase>correct horse battery staple</passphrase>', '<passphrase>[REDACTED:secret]</passphrase>'],
  ['an XML password holding an entity', '<password>p&amp;ss;w0rd</password>', '<password>[REDACTED:secret]</password>'],
  ['an XML token', '<token>abcd1234efgh5678</token>', '<token>[REDACTED:secret]</token>'],
  ['a flag and its value', 'mysql -u root --password hunter2 db', 'mysql -u root --password [REDACTED:secret] db'],
  ['a flag and = (already redacted)', 'mysql --password=hunter2 db', 'mysql --password=[REDACTED:secret] db'],
  ['a prefixed flag, its value quoted', "app --db-password 'pw' --verbose", "app --db-password '[REDACTED:secret]' --verbose"],
  ['a single-dash flag', 'keytool -list -password changeit', 'keytool -list -password [REDACTED:secret]'],
  ['a flag and a passphrase of words, whole', 'gpg --passphrase "correct horse battery" -d x', 'gpg --passphrase "[REDACTED:secret]" -d x'],
  ['a token flag', 'vault login --token abcd1234efgh5678', 'vault login --token [REDACTED:secret]'],
  ['a flag at the start of a line', '--password hunter2', '--password [REDACTED:secret]'],
  ['a Go short variable declaration', 'password := "hunter2"', 'password := "[REDACTED:secret]"'],
  ['a Go passphrase of words, whole', 'passphrase := "correct horse battery"', 'passphrase := "[REDACTED:secret]"'],
  ['a Perl passphrase of words, whole', "(passphrase => 'my pass phrase')", "(passphrase => '[REDACTED:secret]')"],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['a comparison', 'if (password == null) return;\nif (password === "") fail();\nwhile (token == undefined) wait();'],
  ['a placeholder in a PHP array', "'password' => '***',\n'password' => '',\n'password' => null,"],
  ['a variable in a PHP array', "'password' => $password,\n'password' => $request->password,"],
  ['code in a PHP array', "'password' => env('DB_PASSWORD', ''),\n'password' => Hash::make($data['password']),\n'password' => bcrypt($request->password),"],
  ["Laravel's validation rules", "'password' => ['required', 'string', 'min:8', 'confirmed'],\n'password' => 'required|string|min:8|confirmed',\n'password' => 'nullable|min:8',"],
  ["Perl's undef", "$VAR1 = {\n  'password' => undef,\n};"],
  ["Laravel's validation message", "'password' => 'The provided password is incorrect.',"],
  ["Rails' filtered parameters", 'Parameters: {"user"=>{"email"=>"a@b.c", "password"=>"[FILTERED]"}}'],
  ['arrow functions', 'const ok = users.map(password => password.trim());\nconst check = password => hash(password);\ntokens.filter(token => token.expired)'],
  ['a Go declaration of a call', 'password := os.Getenv("DB_PASSWORD")\npassword := readPassword()'],
  ['an empty XML element', '<password/>\n<password></password>\n<password />'],
  ['a placeholder or a reference in an XML element', '<password>${DB_PASS}</password>\n<password>***</password>\n<password>{{ .Values.pw }}</password>'],
  ['an XML element holding elements', '<password>\n  <value>x</value>\n</password>'],
  ['a type argument, no element', 'const [pw, setPw] = useState<Password>(initial);\nconst m = new Map<string, Token>(entries);\nlet t = <Token>value;'],
  ['an XML element of another name', '<password_hash>$2y$10$abc</password_hash>\n<passwordRequired>true</passwordRequired>'],
  ['HTML', '<input type="password" name="password">\n<label for="password">Password</label>'],
  ['a path after a flag', '--password-file /run/secrets/x\n--password /run/secrets/db'],
  ['a reference after a flag', '--password $DB_PASS\n--password "$DB_PASS"\n--password ${DB_PASSWORD}'],
  ['a flag without a value', 'psql --password --host db\npsql -W --password\n'],
  ['help text', '  --password PASSWORD  the password to connect with\n  --password TEXT      Password.\nusage: app [--password PASSWORD] [--token TOKEN]'],
  ['help text of lowercase metavars', ' -password val       Set PKCS#12 import/export password source\n  -p, --password string   Password'],
  ['prose about a flag', 'Pass the --password flag, or use --password to set it.\nUse the --http-user and --http-password options for HTTP.'],
  ['a status line', 'no password: ok\nNo password: skipped\nwithout password: ok'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test.each<[string, string, string]>([
  ['a status of its own', 'password: ok', 'password: [REDACTED:secret]'],
  ['a password told to a user', 'Your password: hunter2', 'Your password: [REDACTED:secret]'],
  ['a new password', 'New password: abc', 'New password: [REDACTED:secret]'],
  ['a negation on another key', 'no password: ok\npassword: ok', 'no password: ok\npassword: [REDACTED:secret]'],
])('a status line is kept only where a negation names no password: still redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

/** The new forms' prefixes repeated, and their near misses: each MiB in under 600 ms of CPU, as in redaction-redos.test.ts. */
const hostile = (): readonly string[] => [
  fill("'password' => '"),
  fill("'password' => 'a b "),
  fill('[password] => '),
  fill('password => '),
  fill('password =>'),
  fill('<password>'),
  fill('<password>a b '),
  fill('<a:password>'),
  fill(`<password>${'a'.repeat(2000)}`),
  fill(`<${'a'.repeat(70)}password>x`),
  fill('<password></'),
  fill('useState<Password>(a'),
  fill(`<token>${'a'.repeat(1100)}`),
  fill('--password '),
  fill('--password -'),
  fill(`--${'a-'.repeat(40)}password x `),
  fill('-password "a b '),
  fill('password == '),
  fill('password :='),
  fill('no password: ok '),
  fill('no pwd=a '),
  `<password>${'a '.repeat(MIB / 2)}`,
  // A match, and a call of its replacement, every few characters.
  fill("'pwd'=>'a',"),
  fill('<pwd>a</pwd>'),
  fill('--pwd a '),
];

test('the new forms stay linear: each hostile MiB redacted in under 600 ms of CPU', () => {
  expect(slowRedactions(hostile(), notLinearPast(600))).toEqual([]);
});
