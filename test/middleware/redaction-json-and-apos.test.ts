import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';
import { notLinearPast, slowRedactions } from './slow-redactions';

// Found after d9ab48b: a password field's value that starts with whitespace (`{"password":"\n
// hunter2x"}`, a line break and an indent) was read as a message by both passes: the text pass
// took its first character after the quote for the value's start, and the JSON pass kept any
// value holding whitespace. One word after whitespace is a password; several words stay wording.
// And attributes quoted by single-quote entities (`&#39;`, `&#039;`, `&#x27;`, `&apos;`: PHP's
// htmlspecialchars with ENT_QUOTES, Python's html.escape) were not read as `&quot;` ones are.

test.each<[string, string, string]>([
  ['a JSON password after an escaped line break and an indent', '{"password":"\\n  hunter2x"}', '{"password":"\\n  [REDACTED:secret]"}'],
  ['a JSON password between escaped line breaks', '{"user":"app","password":"\\n  hunter2x\\n"}', '{"user":"app","password":"\\n  [REDACTED:secret]\\n"}'],
  ['a JSON password between spaces, or after an escaped tab', '{"password": "  hunter2x  ","db_password":"\\ts3cr"}', '{"password": "  [REDACTED:secret]  ","db_password":"\\t[REDACTED:secret]"}'],
  ['a JSON password ending in an escaped line break (the JSON pass kept it)', '{"password":"hunter2x\\n","n":1}', '{"password":"[REDACTED:secret]\\n","n":1}'],
  [
    'a token beside JSON wording after whitespace (the JSON pass keeps the wording)',
    '{"password":"\\n  must be at least 8 characters","token":"abcd1234efgh5678"}',
    '{"password":"\\n  must be at least 8 characters","token":"[REDACTED:secret]"}',
  ],
  ['in JSON lines (the text pass alone)', '{"password":"\\n  hunter2x"}\n{"pwd":"\\n\\thunter2x\\n"}\n{"n":1}', '{"password":"\\n  [REDACTED:secret]"}\n{"pwd":"\\n\\t[REDACTED:secret]\\n"}\n{"n":1}'],
  ['in JSON inside a JSON string', '{"body":"{\\"password\\":\\" hunter2x\\"}"}', '{"body":"{\\"password\\":\\" [REDACTED:secret]\\"}"}'],
  ["in a PHP array", "'password' => ' hunter2x'", "'password' => ' [REDACTED:secret]'"],
  ['an add quoted &#39;', '<add key=&#39;Password&#39; value=&#39;hunter2x&#39;/>', '<add key=&#39;Password&#39; value=&#39;[REDACTED:secret]&#39;/>'],
  ['a property quoted &apos;', '<property name=&apos;password&apos; value=&apos;hunter2x&apos;/>', '<property name=&apos;password&apos; value=&apos;[REDACTED:secret]&apos;/>'],
  [
    'adds quoted &#039; and &#x27;',
    '<add key=&#039;DbPassword&#039; value=&#039;s3cr&#039;/>\n<add key=&#x27;ApiToken&#x27; id=&#X27;x&#x27; value=&#x27;abcd1234efgh&#x27;/>',
    '<add key=&#039;DbPassword&#039; value=&#039;[REDACTED:secret]&#039;/>\n<add key=&#x27;ApiToken&#x27; id=&#X27;x&#x27; value=&#x27;[REDACTED:api_key]&#x27;/>',
  ],
  ['a value quoted &#39; holding &quot;, and one quoted &quot; holding &#39;', '<add key=&#39;Password&#39; value=&#39;say &quot;hi&quot; 2x&#39;/>\n<add key=&quot;Password&quot; value=&quot;pa&#39;ss&quot;/>', '<add key=&#39;Password&#39; value=&#39;[REDACTED:secret]&#39;/>\n<add key=&quot;Password&quot; value=&quot;[REDACTED:secret]&quot;/>'],
  ['an HTML-escaped add quoted &#x27;', '&lt;add key=&#x27;Password&#x27; value=&#x27;hunter2x&#x27; /&gt;', '&lt;add key=&#x27;Password&#x27; value=&#x27;[REDACTED:secret]&#x27; /&gt;'],
  ['a value first, quoted &#39; or &apos;', '<add value=&#39;hunter2x&#39; key=&#39;Password&#39;/>\n<add value=&apos;p&amp;ss&apos; id=&apos;x&apos; key=&apos;DbPassword&apos;/>', '<add value=&#39;[REDACTED:secret]&#39; key=&#39;Password&#39;/>\n<add value=&apos;[REDACTED:secret]&apos; id=&apos;x&apos; key=&apos;DbPassword&apos;/>'],
  ["an element's text after attributes quoted &#39;, or under a key named &apos;", '<password enc=&#39;no&#39;>hunter2x</password>\n<entry key=&apos;password&apos;>s3cr</entry>', '<password enc=&#39;no&#39;>[REDACTED:secret]</password>\n<entry key=&apos;password&apos;>[REDACTED:secret]</entry>'],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['JSON wording after whitespace', '{"password":"\\n  must be at least 8 characters"}\n{"password": " is too short "}\n{"password":"\\n  hunter2x was rejected\\n"}'],
  ['JSON wording (as before)', '{"password": "must be at least 8 characters"}'],
  ['whitespace alone, a reference or a mask after whitespace', '{"password":"\\n  "}\n{"password":"\\n  ${DB_PASS}\\n"}\n{"password":" ***"}\n{"password":"\\t{{ .Values.pw }}"}'],
  ['a key that only starts like a password', '{"password_hint":"\\n  hunter"}'],
  ['settings about passwords quoted &#39; or &apos;', '<add key=&#39;PasswordLength&#39; value=&#39;12&#39;/>\n<add value=&apos;12&apos; key=&apos;PasswordLength&apos;/>'],
  ['an empty value or a reference quoted &#39;', '<add key=&#39;Password&#39; value=&#39;&#39;/>\n<add key=&#x27;Password&#x27; value=&#x27;${DB_PASS}&#x27;/>'],
  ['an HTML anchor, or a value first under another name, quoted &#39;', '<a name=&#39;password&#39;>Password</a>\n<input value=&#39;alice&#39; name=&#39;username&#39;>'],
  ['prose with &#39;', 'Don&#39;t share your password&#39;s hash with &#39;anyone&#39;.'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

describe('through the gRPC service', () => {
  const body = JSON.stringify({ db: { password: '\n  hunter2x\n' }, page: '<add key=&#39;Password&#39; value=&#39;s3cr&#39;/>', error: { password: '\n  must be set' } });
  let d: ToolApp;
  beforeAll(async () => {
    const config: ToolRoute = (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    d = await startToolApp({ '/config': config }, (url) => `  - { name: get_config, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/config" } }`);
  });
  afterAll(() => d.close());

  test('the output the model reads holds neither password, keeps the message, and is the same JSON', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'get_config', arguments: '{}' }] });
    const output = res.results[0]!.output;
    expect(JSON.parse(output)).toEqual({ db: { password: '\n  [REDACTED:secret]\n' }, page: '<add key=&#39;Password&#39; value=&#39;[REDACTED:secret]&#39;/>', error: { password: '\n  must be set' } });
  });
});

const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

/**
 * The new forms' prefixes repeated, and their near misses: each MiB under 1,000 ms of CPU, as in
 * redaction-redos.test.ts.
 */
const hostile = (): readonly string[] => [
  fill('"password":"\\n  '),
  fill('"pwd":" a'),
  fill(`"pwd":"${' '.repeat(40)}a`),
  fill(`"pwd":"\\t${'\\n'.repeat(40)}a`),
  fill(`"pwd":" a${' '.repeat(250)}b"`),
  fill(`"pwd":" a${'\\n'.repeat(120)}b"`),
  `[${'{"pwd":"\\n  a"},'.repeat(MIB / 16)}0]`,
  fill('key=&#39;password&#39; value=&#39;'),
  fill(`key=&apos;pwd&apos; value=&apos;${'a'.repeat(1100)}`),
  fill(` value=&#x27;${'&quot;'.repeat(200)}`),
  fill(' value=&#39;a&#39; key=&#39;'),
  fill(` value=&#039;a&#039;${' b=&apos;c&apos;'.repeat(9)} key=&#039;pwd&#039;`),
  fill('<pwd b=&#39;&#39;'),
  fill('&#39;&apos;&#x27;&#039;'),
];

test('the new forms stay linear: each hostile MiB redacted in under 1,000 ms of CPU', () => {
  expect(slowRedactions(hostile(), notLinearPast(1000))).toEqual([]);
});
