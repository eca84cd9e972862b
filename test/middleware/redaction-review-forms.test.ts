import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';
import { notLinearPast, slowRedactions } from './slow-redactions';

// Found in review: a password on the line after its key (`password:` then `  hunter2x`, YAML's
// plain scalar continued) was left to the entropy step, which keeps a low-entropy one; a key
// named in a `&quot;`-escaped attribute, or in a `key` attribute after its `value`, kept its
// value; short flags whose value is certainly a password (`sshpass -p`, mysql's `-pSECRET`,
// redis-cli's `-a`) kept theirs. And flags and words that are no password's key lost what
// followed them: psql's `--password` takes no value (`psql --password mydb`: mydb is the
// database), gpg's `--passwd` is an action on a user id, and print_r's `[password] => Array`
// opens a nested array.

test.each<[string, string, string]>([
  ['a YAML password on the next line', 'db:\n  password:\n    hunter2x\n  user: app', 'db:\n  password:\n    [REDACTED:secret]\n  user: app'],
  ['a password on the next line, CRLF', 'password:\r\n  hunter2x\r\n', 'password:\r\n  [REDACTED:secret]\r\n'],
  ['a password on the next line, quoted', 'password:\n  "hunter2x"\n', 'password:\n  "[REDACTED:secret]"\n'],
  ['a YAML block scalar', 'password: |\n  hunter2x\n', 'password: |\n  [REDACTED:secret]\n'],
  ['an add of &quot;-escaped attributes', '<add key=&quot;DbPassword&quot; value=&quot;hunter2&quot;/>', '<add key=&quot;DbPassword&quot; value=&quot;[REDACTED:secret]&quot;/>'],
  [
    'an HTML-escaped add of &quot;-escaped attributes, its value holding an entity',
    '&lt;add key=&quot;DbPassword&quot; value=&quot;p&amp;amp;ss&quot; /&gt;',
    '&lt;add key=&quot;DbPassword&quot; value=&quot;[REDACTED:secret]&quot; /&gt;',
  ],
  ['an add whose value comes first', '<add value="hunter2" key="Password"/>', '<add value="[REDACTED:secret]" key="Password"/>'],
  ['a property whose value comes first, attributes between', "<property value='s3cr' id='x' name='db.password' />", "<property value='[REDACTED:secret]' id='x' name='db.password' />"],
  ['a token whose value comes first', '<add value="abcd1234efgh5678" key="ApiToken" />', '<add value="[REDACTED:api_key]" key="ApiToken" />'],
  ["sshpass's -p", 'sshpass -p hunter2 ssh app@db', 'sshpass -p [REDACTED:secret] ssh app@db'],
  ["sshpass's -p, attached, after -v", 'sshpass -v -phunter2 ssh app@db', 'sshpass -v -p[REDACTED:secret] ssh app@db'],
  ["mysql's -p, attached", 'mysql -u root -proot app\nmysqldump -h db -p"s3cr" app', 'mysql -u root -p[REDACTED:secret] app\nmysqldump -h db -p"[REDACTED:secret]" app'],
  ["redis-cli's -a", 'redis-cli -h cache -a hunter2 ping', 'redis-cli -h cache -a [REDACTED:secret] ping'],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['YAML maps and lists on the next line', 'password:\n  secretKeyRef:\n    name: db\npassword:\n  valueFrom: x\npassword:\n  - a\npassword:\nuser: bob'],
  ['prose on the next line', 'Enter password:\n  Login failed for user app'],
  ["mysql's -p and a database", 'mysql -u root -p secret\nmysql -p -u root'],
  ['short flags of other tools', 'mkdir -pv /tmp/x\nssh -p 2222 host\ndocker run -p 8080:80 app\ncurl -a x'],
  ["psql's --password, which takes no value", 'psql --password mydb\npsql -h db -U app --password appdb\npg_dump --password app > app.sql'],
  ["gpg's --passwd, an action on a user id", 'gpg --passwd alice@example.com\ngpg2 --batch --passwd alice'],
  ["print_r's nested array", 'Array\n(\n    [password] => Array\n        (\n            [0] => required\n        )\n)'],
  ["print_r's nested object", '[password] => stdClass Object\n    (\n        [hash] => x\n    )'],
  ['&quot;-escaped settings about passwords', '<add key=&quot;PasswordLength&quot; value=&quot;12&quot;/>'],
  ['a value first under another name', '<add value="12" key="PasswordLength"/>\n<input value="x" name="username">'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test("a value that is a password's still is after a flag of other tools", () => {
  expect(redactSecrets('app --password mydb')).toBe('app --password [REDACTED:secret]');
  expect(redactSecrets('[password] => Array2x')).toBe('[password] => [REDACTED:secret]');
});

describe('through the gRPC service', () => {
  const body = 'db:\n  password:\n    hunter2x\nrun: sshpass -p hunter2 ssh app@db\nthen: psql --password mydb\n<add value="s3cr" key="Password"/>';
  let d: ToolApp;
  beforeAll(async () => {
    const config: ToolRoute = (_req, res) => void res.writeHead(200).end(body);
    d = await startToolApp({ '/config': config }, (url) => `  - { name: get_config, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/config" } }`);
  });
  afterAll(() => d.close());

  test('the output the model reads holds none of the passwords, and keeps the database name', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'get_config', arguments: '{}' }] });
    expect(res.results[0]!.output).toBe(
      'db:\n  password:\n    [REDACTED:secret]\nrun: sshpass -p [REDACTED:secret] ssh app@db\nthen: psql --password mydb\n<add value="[REDACTED:secret]" key="Password"/>',
    );
  });
});

const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

/**
 * The new forms' prefixes repeated, and their near misses: each MiB under 1,000 ms of CPU, as in
 * redaction-redos.test.ts (which holds those of the value-first and short-flag patterns, by entry).
 */
const hostile = (): readonly string[] => [
  fill('password:\n  '),
  fill('password:\n  a'),
  fill('pwd:\n a\n'),
  fill('password: |\n'),
  fill('key=&quot;password&quot; value=&quot;'),
  fill(`key=&quot;password&quot; value=&quot;${'a'.repeat(1100)}`),
  fill('psql --password a\n'),
  fill('gpg --passwd a '),
  fill('[pwd] => Array\n'),
];

test('the new forms stay linear: each hostile MiB redacted in under 1,000 ms of CPU', () => {
  expect(slowRedactions(hostile(), notLinearPast(1000))).toEqual([]);
});
