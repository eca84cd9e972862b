import { redactSecretFields, redactSecrets } from '../../src/middleware';
import { notLinearPast, slowRedactions } from './slow-redactions';

// Found in review: a key named in an XML attribute reached the model with its value, though Java
// and .NET configuration files write passwords so (`<property name="password" value="hunter2"/>`,
// `<add key="DbPassword" value="hunter2" />`, `<entry key="api.token">...</entry>`), and so did an
// element with attributes (`<password attr="x">`), a flag's value as the next item of a list (a
// JSON argv, Docker's and Kubernetes' `args:`), and an element HTML shows escaped
// (`&lt;password&gt;...`).

test.each<[string, string, string]>([
  ["Spring's property", '<property name="password" value="hunter2"/>', '<property name="password" value="[REDACTED:secret]"/>'],
  ["Hibernate's dotted name", '<property name="hibernate.connection.password" value="hunter2" />', '<property name="hibernate.connection.password" value="[REDACTED:secret]" />'],
  ["Maven's property in one line of several", '<properties>\n  <property name="db.user" value="app"/>\n  <property name="db.password" value="s3cr"/>\n</properties>', '<properties>\n  <property name="db.user" value="app"/>\n  <property name="db.password" value="[REDACTED:secret]"/>\n</properties>'],
  ["the .NET appSettings' add", '<add key="DbPassword" value="hunter2" />', '<add key="DbPassword" value="[REDACTED:secret]" />'],
  ['a token in an add', '<add key="ApiToken" value="abcd1234efgh5678" />\n<add key="GitHubToken" value="zyxw9876vuts5432"/>', '<add key="ApiToken" value="[REDACTED:api_key]" />\n<add key="GitHubToken" value="[REDACTED:secret]"/>'],
  ['a value of words or entities, whole', '<property name="passphrase" value="correct horse battery"/>\n<add key="Password" value="p&amp;ss w0rd"/>', '<property name="passphrase" value="[REDACTED:secret]"/>\n<add key="Password" value="[REDACTED:secret]"/>'],
  ['single quotes', "<property name='password' value='hunter2'/>", "<property name='password' value='[REDACTED:secret]'/>"],
  ['other attributes between the name and the value', '<input type="password" name="password" id="pw" value="hunter2">', '<input type="password" name="password" id="pw" value="[REDACTED:secret]">'],
  ['attributes over lines', '<property\n    name="password"\n    value="hunter2"/>', '<property\n    name="password"\n    value="[REDACTED:secret]"/>'],
  ['escaped quotes (XML in a JSON string read as text)', 'log: "<add key=\\"DbPassword\\" value=\\"hunter2\\" />"', 'log: "<add key=\\"DbPassword\\" value=\\"[REDACTED:secret]\\" />"'],
  ['XML in a JSON document', '{"config":"<add key=\\"DbPassword\\" value=\\"hunter 2\\" />"}', '{"config":"<add key=\\"DbPassword\\" value=\\"[REDACTED:secret]\\" />"}'],
  ["Java's properties XML", '<entry key="api.token">abc123def456</entry>\n<entry key="password">hunter2</entry>', '<entry key="api.token">[REDACTED:secret]</entry>\n<entry key="password">[REDACTED:secret]</entry>'],
  ["Log4j's property", '<Property name="dbPassword">hunter2</Property>', '<Property name="dbPassword">[REDACTED:secret]</Property>'],
  ["a property's value element", '<property name="password"><value>hunter2</value></property>\n<setting name="Password" serializeAs="String">\n  <value>hunter2</value>\n</setting>', '<property name="password"><value>[REDACTED:secret]</value></property>\n<setting name="Password" serializeAs="String">\n  <value>[REDACTED:secret]</value>\n</setting>'],
  ['an element with attributes', '<password attr="x">hunter2</password>\n<cfg:password encrypted="false" >pw</cfg:password>', '<password attr="x">[REDACTED:secret]</password>\n<cfg:password encrypted="false" >[REDACTED:secret]</cfg:password>'],
  ["Tomcat's Resource (already)", '<Resource name="jdbc/app" username="app" password="hunter2" driverClassName="org.postgresql.Driver"/>', '<Resource name="jdbc/app" username="app" password="[REDACTED:secret]" driverClassName="org.postgresql.Driver"/>'],
  ['a connection string in an attribute (already)', '<add name="Main" connectionString="Server=db;User Id=app;Password=hunter2;" />', '<add name="Main" connectionString="Server=db;User Id=app;Password=[REDACTED:secret];" />'],
  ['a JSON argv', '["--password", "hunter2"]', '["--password", "[REDACTED:secret]"]'],
  ['a JSON argv in an object, beside other flags', '{"args": ["--host", "db", "--db-password", "hunter2", "--verbose"]}', '{"args": ["--host", "db", "--db-password", "[REDACTED:secret]", "--verbose"]}'],
  ['a JSON argv, one item a line', '{\n  "args": [\n    "--token",\n    "abcd1234efgh5678"\n  ]\n}', '{\n  "args": [\n    "--token",\n    "[REDACTED:secret]"\n  ]\n}'],
  ['a JSON argv of a passphrase of words', '["gpg", "--passphrase", "correct horse battery", "-d"]', '["gpg", "--passphrase", "[REDACTED:secret]", "-d"]'],
  ['a single-dash flag in an argv', '["keytool", "-list", "-storepass", "x", "-password", "changeit"]', '["keytool", "-list", "-storepass", "x", "-password", "[REDACTED:secret]"]'],
  ['a YAML flow list', 'args: ["--password", "hunter2", "--host", "db"]\ncommand: [\'app\', \'--token\', \'abcd1234efgh5678\']', 'args: ["--password", "[REDACTED:secret]", "--host", "db"]\ncommand: [\'app\', \'--token\', \'[REDACTED:secret]\']'],
  ['a YAML block list', 'args:\n  - --password\n  - hunter2\n  - --host\n  - db', 'args:\n  - --password\n  - [REDACTED:secret]\n  - --host\n  - db'],
  ['a YAML block list, quoted', 'args:\n- "--password"\n- "hunter2"', 'args:\n- "--password"\n- "[REDACTED:secret]"'],
  ['an HTML-escaped element', '<pre>&lt;password&gt;hunter2&lt;/password&gt;</pre>', '<pre>&lt;password&gt;[REDACTED:secret]&lt;/password&gt;</pre>'],
  ['an HTML-escaped element of words and entities, whole', '&lt;passphrase&gt;a &amp;amp; b&lt;/passphrase&gt;\n&lt;token id="x"&gt;abcd1234efgh5678&lt;/token&gt;', '&lt;passphrase&gt;[REDACTED:secret]&lt;/passphrase&gt;\n&lt;token id="x"&gt;[REDACTED:secret]&lt;/token&gt;'],
  ['an HTML-escaped property', '<code>&lt;property name="password" value="hunter2"/&gt;</code>', '<code>&lt;property name="password" value="[REDACTED:secret]"/&gt;</code>'],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['a reference or a placeholder in a value attribute', '<property name="password" value="${DB_PASS}"/>\n<add key="DbPassword" value="***" />\n<property name="password" value="{{ .Values.pw }}"/>'],
  ['an empty value attribute', '<property name="password" value=""/>\n<add key="DbPassword" value="" />\n<input type="password" name="password" value="">'],
  [
    'settings about passwords, named by what follows the name',
    '<add key="PasswordLength" value="12"/>\n<add key="PasswordPolicy" value="strong"/>\n<property name="password.min.length" value="8"/>\n' +
      '<add key="MaxPasswordAge" value="90"/>\n<add key="PasswordRequired" value="yes"/>\n<add key="PasswordExpiryDays" value="30"/>\n' +
      '<add key="passwordHint" value="pet"/>\n<add key="PasswordResetUrl" value="x"/>\n<entry key="password.policy">strict</entry>',
  ],
  ["a membership provider's settings", '<add name="AspNetSqlMembershipProvider" passwordFormat="Hashed" minRequiredPasswordLength="7" enablePasswordReset="true" />'],
  ['a flag on a password that is a setting', '<add key="RequirePassword" value="true"/>\n<add key="EnablePassword" value="false"/>'],
  ['a password file in an argv', '["--password-file", "/run/secrets/x"]\n["--password", "/run/secrets/db"]'],
  ['another flag after a flag in an argv', '["psql", "--password", "--host", "db"]'],
  ['a reference in an argv', '["--password", "$(DB_PASS)"]\n["--password", "${DB_PASS}"]'],
  ['a short flag (ambiguous)', '["-p", "5432"]\nargs: ["-p", "8080"]'],
  ['a YAML block list of flags', 'args:\n  - --password\n  - --host\n  - db'],
  ['an HTML form', '<label for="password">Password</label>\n<input type="password" name="password" id="password" placeholder="Password">\n<a name="password">Password</a>\n<input name="password">Password</label>'],
  ['an option naming a password', '<option value="password">Password</option>'],
  ['a name that is not a password', '<property name="username" value="app"/>\n<add key="Passwords" value="x"/>'],
  ['an HTML-escaped element, empty or holding a placeholder', '&lt;password&gt;&lt;/password&gt;\n&lt;password&gt;${DB_PASS}&lt;/password&gt;\n&lt;password/&gt;'],
  ['an HTML-escaped type argument', 'useState&lt;Password&gt;(initial)'],
  ['wording in a value attribute', '<add key="Password" value="The password of the service account"/>'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test("an approval's arguments show no flag's value in an argv, and keep other items", () => {
  const args = { argv: ['psql', '--password', 'pw', '--host', 'db', '--token', 'abc', '--password-file', '/run/x', '--password', '--verbose'] };
  expect(redactSecretFields(args)).toEqual({
    argv: ['psql', '--password', '[REDACTED:secret]', '--host', 'db', '--token', '[REDACTED:secret]', '--password-file', '/run/x', '--password', '--verbose'],
  });
});

const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

/** The new forms' prefixes repeated, and their near misses: each MiB in under 600 ms of CPU, as in redaction-redos.test.ts. */
const hostile = (): readonly string[] => [
  fill('<property name="password" value="'),
  fill('<property name="password" value="a b '),
  fill(`<property name="password" value="${'a'.repeat(1100)}`),
  fill('<add key="DbPassword" a="b" c="d" e="f" g="h" i="j" k="l" m="n" o="p" q="r" '),
  fill(`name="password"${' a="b"'.repeat(40)}`),
  fill('name="password" '),
  fill('key="password">'),
  fill(`<entry key="password">${'a'.repeat(1100)}`),
  fill('<entry key="password"><value>'),
  fill('<password a="'),
  fill(`<password a="${'b'.repeat(300)}`),
  fill('<password a="b">a '),
  fill('["--password", "'),
  fill('"--password", '),
  fill('["--password", "--password", '),
  fill(`"--password",${' '.repeat(70)}`),
  fill('- --password\n'),
  fill('- --password\n- '),
  fill('&lt;password&gt;'),
  fill('&lt;password&gt;a &amp; '),
  fill(`&lt;password&gt;${'a'.repeat(1100)}`),
  fill('&lt;password a="b"&gt;'),
  fill('&lt;password'),
  // A match, and a call of its replacement, every few characters.
  fill('<p name="pwd" value="a"/>'),
  fill('<entry key="pwd">a</entry>'),
  fill('["--pwd","a"],'),
  fill('&lt;pwd&gt;a&lt;/pwd&gt;'),
];

test('the new forms stay linear: each hostile MiB redacted in under 600 ms of CPU', () => {
  expect(slowRedactions(hostile(), notLinearPast(600))).toEqual([]);
});
