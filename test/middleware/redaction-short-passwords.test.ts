import { redactSecrets } from '../../src/middleware';

// Found in review: a value under a secret's key was redacted from 8 characters only, a password's
// too, so the short passwords people choose reached the model as written: `password: hunter2`,
// `{"password":"admin"}`, `DB_PASSWORD=root`, `SMTP_PASSWORD="a b c"`. A password's key now hides
// its value from one character; other keys (token, secret, api_key) keep the floor of 8.

test.each<[string, string, string]>([
  ['YAML', 'db:\n  user: app\n  password: hunter2\n', 'db:\n  user: app\n  password: [REDACTED:secret]\n'],
  ['YAML, quoted', "password: 'root'", "password: '[REDACTED:secret]'"],
  ['a .env file', 'DB_USER=app\nDB_PASSWORD=root\nDB_HOST=db', 'DB_USER=app\nDB_PASSWORD=[REDACTED:secret]\nDB_HOST=db'],
  ['a .env passphrase of short words', 'SMTP_PASSWORD="a b c"\nNEXT=1', 'SMTP_PASSWORD="[REDACTED:secret]"\nNEXT=1'],
  ['one character', 'POSTGRES_PASSWORD=x', 'POSTGRES_PASSWORD=[REDACTED:secret]'],
  ['a shell export', "export PGPASSWORD='pg1' && psql", "export PGPASSWORD='[REDACTED:secret]' && psql"],
  ['a command-line flag', 'mysql --user=root --password=toor db', 'mysql --user=root --password=[REDACTED:secret] db'],
  ['a URL query', 'GET /login?user=bob&password=abc&next=/home', 'GET /login?user=bob&password=[REDACTED:secret]&next=/home'],
  ['a short pwd in a query', '/api?pwd=ab', '/api?pwd=[REDACTED:secret]'],
  ['headers', 'X-Password: s3cr\r\nPassword: abc\r\nAccept: */*', 'X-Password: [REDACTED:secret]\r\nPassword: [REDACTED:secret]\r\nAccept: */*'],
  ['a connection string', 'Server=db;User Id=sa;Password=abc;', 'Server=db;User Id=sa;Password=[REDACTED:secret];'],
  ['an ODBC Pwd', 'DSN=prod;Uid=app;Pwd=ab12;', 'DSN=prod;Uid=app;Pwd=[REDACTED:secret];'],
  ['camelCase and a passphrase', 'smtpPassword=mail1 keyPassphrase: gpg', 'smtpPassword=[REDACTED:secret] keyPassphrase: [REDACTED:secret]'],
  ['a passwd key', 'passwd: letmein', 'passwd: [REDACTED:secret]'],
  ['a spaced INI assignment', '[db]\npassword = admin\nport = 5432', '[db]\npassword = [REDACTED:secret]\nport = 5432'],
  ['a number', 'pin_password: 1234', 'pin_password: [REDACTED:secret]'],
  ['JSON lines (read as text)', '{"user":"bob","password":"admin"}\n{"user":"eve","password":"1"}', '{"user":"bob","password":"[REDACTED:secret]"}\n{"user":"eve","password":"[REDACTED:secret]"}'],
  ['JSON with escaped quotes in a string', 'cfg: {\\"password\\":\\"admin\\"}', 'cfg: {\\"password\\":\\"[REDACTED:secret]\\"}'],
  ['a log line', 'level=info msg="connecting" user=bob password=pw1 host=db', 'level=info msg="connecting" user=bob password=[REDACTED:secret] host=db'],
  ['a word of letters', 'Password: Login', 'Password: [REDACTED:secret]'],
])('redacts a short password in %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

// A JSON document is redacted value by value; its short passwords, strings and numbers, too.
test.each<[string, unknown, unknown]>([
  ['a string', { user: 'bob', password: 'admin' }, { user: 'bob', password: '[REDACTED:secret]' }],
  ['one character', { password: 'a' }, { password: '[REDACTED:secret]' }],
  ['a number', { password: 1234 }, { password: '[REDACTED:secret]' }],
  ['compound keys', { DB_PASSWORD: 'root', smtpPassword: 'mail', 'x-password': 'pw', passphrase: 'abc' }, { DB_PASSWORD: '[REDACTED:secret]', smtpPassword: '[REDACTED:secret]', 'x-password': '[REDACTED:secret]', passphrase: '[REDACTED:secret]' }],
  ['nested, beside a long one', { a: { password: 'pw' }, b: { password: 'hunter2hunter2' } }, { a: { password: '[REDACTED:secret]' }, b: { password: '[REDACTED:secret]' } }],
  ['a Kubernetes env pair', { env: [{ name: 'X', value: 'y' }], pwd: 'abc' }, { env: [{ name: 'X', value: 'y' }], pwd: '[REDACTED:secret]' }],
])('redacts a short password in a JSON document: %s', (_what, doc, expected) => {
  for (const indent of [undefined, 2]) expect(JSON.parse(redactSecrets(JSON.stringify(doc, null, indent)))).toEqual(expected);
});

test.each([
  ['placeholders in YAML', 'password: null\npassword: ~\npassword: true\npassword: false\npassword: none\npassword: N/A\npassword: "***"\npassword: ****\npassword: ********\npassword: ""\npassword:\n'],
  ['placeholders in JSON', '{"password":null,"pwd":"","passwd":"****","passphrase":"[REDACTED]","DB_PASSWORD":"<redacted>","x":{"password":"[FILTERED]"},"n":1}'],
  ['what a schema or API doc writes', 'password: string\npassword: required\npassword: optional\n{"password":"string","passwd":"required"}'],
  ['a masked value in text', 'password=[REDACTED] pwd=<redacted> passwd=*** x=1'],
  ['what stands in for one in a template or a query', 'password: <your password>\npassword: {password}\npassword=%s\npwd=?\n'],
  ['references', 'DB_PASSWORD=$DB_PASS\npassword: ${SMTP_PASSWORD}\npassword: "{{ .Values.db.password }}"\npassword: {{ .Values.db.password }}\n'],
  ['a validation message under a JSON key, in JSON lines', '{"errors":{"password":"is too short"}}\n{"password": "can\'t be blank"}'],
  ['a validation message under a JSON key, in a document', '{"errors":{"password":"is too short"},"field":"pwd"}'],
  ['a sentence', 'Password: The password of the database user.\npassword: must be at least 8 characters'],
  ['code', 'password = dbPassword\npassword: string;\nconst pwd = getPwd();\nself.password = password\nconnect(password=None)\n  password: str = ""\n'],
  ['a path', 'PWD=/tmp\nOLDPWD=/\n'],
  ['a YAML key whose value is on the next lines', 'password:\n  secretKeyRef: {name: db}\nuser:\n  name: app'],
  ['an escaped line break after the key, in JSON lines', '{"out":"Enter password:\\nOK"}\n{"x":1}'],
  ['words that only start like a key', 'passwords: a b\npassword_required: true\npasswordless: on\n'],
  ['a lowercase prefix', 'dbpassword=ab'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test.each([
  ['a token', 'token=abc1234 {"token":1234567} ?access_token=abcdefg'],
  ['a secret', 'client_secret: short\n{"secret":"swordfi"}'],
  ['an API key', 'api_key=k1 {"apiKey":"abc"}'],
  ['credentials', 'credentials: ab12'],
])('other secret keys keep the floor of 8: %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test('redacting again changes nothing', () => {
  const once = redactSecrets('password: abc\nSMTP_PASSWORD="a b"\n{"password":"ab","n":1}');
  expect(once).toBe('password: [REDACTED:secret]\nSMTP_PASSWORD="[REDACTED:secret]"\n{"password":"[REDACTED:secret]","n":1}');
  expect(redactSecrets(once)).toBe(once);
});
