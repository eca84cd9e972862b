import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';
import { notLinearPast, slowRedactions } from './slow-redactions';

// Found in review: a password on the line after its key was read only across a real line break.
// In a JSON string the break is the escape `\n`, which the text patterns read as written, and the
// JSON pass (which decodes strings, where the break is real) runs only once the text pass found
// something or the text holds an escape that hides a secret (`\u`, `\/`): `{"config":"db:\n
// password:\n    hunter2x\n"}` reached the model whole. And an attribute quoted with a numeric
// entity (`&#34;`, `&#x22;`, as Go's html/template and JSTL's c:out write `"`) was not read as
// `&quot;` is, nor was a value attribute quoted `&quot;` before its key's.

test.each<[string, string, string]>([
  ['YAML in a JSON string', '{"config":"db:\\n  password:\\n    hunter2x\\n"}', '{"config":"db:\\n  password:\\n    [REDACTED:secret]\\n"}'],
  ['YAML in a JSON string, the value ending the string', '{"config":"password:\\n  hunter2x","n":1}', '{"config":"password:\\n  [REDACTED:secret]","n":1}'],
  ['YAML in a JSON string, CRLF', '{"config":"password:\\r\\n  hunter2x\\r\\n"}', '{"config":"password:\\r\\n  [REDACTED:secret]\\r\\n"}'],
  ['YAML in a JSON string, the value quoted', '{"config":"password:\\n  \\"hunter2x\\"\\n"}', '{"config":"password:\\n  \\"[REDACTED:secret]\\"\\n"}'],
  ['YAML in a JSON string, a block scalar', '{"config":"password: |\\n  hunter2x\\nuser: app"}', '{"config":"password: |\\n  [REDACTED:secret]\\nuser: app"}'],
  ['YAML in a JSON string, indented by an escaped tab', '{"config":"password:\\n\\thunter2x\\n"}', '{"config":"password:\\n\\t[REDACTED:secret]\\n"}'],
  ['YAML in JSON lines (no one document)', '{"config":"password:\\n  hunter2x\\n"}\n{"n":1}', '{"config":"password:\\n  [REDACTED:secret]\\n"}\n{"n":1}'],
  ['YAML in a quoted log field', 'level=info config="db:\\n  password:\\n    hunter2x\\n  user: app"', 'level=info config="db:\\n  password:\\n    [REDACTED:secret]\\n  user: app"'],
  ["YAML in Python's repr", "'db:\\n  pwd:\\n    s3cr\\n'", "'db:\\n  pwd:\\n    [REDACTED:secret]\\n'"],
  ['an add quoted &#34;', '<add key=&#34;Password&#34; value=&#34;hunter2x&#34;/>', '<add key=&#34;Password&#34; value=&#34;[REDACTED:secret]&#34;/>'],
  ['an add quoted &#x22; and &#034;', '<add key=&#x22;DbPassword&#X22; value=&#x22;hunter2x&#x22;/>\n<add key=&#034;Password&#034; value=&#034;s3cr&#034;/>', '<add key=&#x22;DbPassword&#X22; value=&#x22;[REDACTED:secret]&#x22;/>\n<add key=&#034;Password&#034; value=&#034;[REDACTED:secret]&#034;/>'],
  [
    'an HTML-escaped add quoted &#34;, attributes between, its value holding an entity',
    '&lt;add key=&#34;ApiToken&#34; id=&#34;x&#34; value=&#34;abcd&amp;amp;1234efgh&#34; /&gt;',
    '&lt;add key=&#34;ApiToken&#34; id=&#34;x&#34; value=&#34;[REDACTED:api_key]&#34; /&gt;',
  ],
  ['an element whose attributes are quoted &#34; or &quot;', '<password enc=&#34;no&#34;>hunter2x</password>\n<password enc=&quot;no&quot;>s3cr</password>', '<password enc=&#34;no&#34;>[REDACTED:secret]</password>\n<password enc=&quot;no&quot;>[REDACTED:secret]</password>'],
  ["a key named quoted &#34; or &quot;, its value the element's text", '<entry key=&#34;password&#34;>hunter2x</entry>\n<entry key=&quot;api.token&quot;>abcd1234efgh5678</entry>', '<entry key=&#34;password&#34;>[REDACTED:secret]</entry>\n<entry key=&quot;api.token&quot;>[REDACTED:secret]</entry>'],
  ['an add whose value comes first, quoted &quot;', '<add value=&quot;hunter2x&quot; key=&quot;Password&quot;/>', '<add value=&quot;[REDACTED:secret]&quot; key=&quot;Password&quot;/>'],
  ['an add whose value comes first, quoted &#34;, attributes between', '<add value=&#34;p&amp;ss w0rd&#34; id=&#34;x&#34; key=&#34;DbPassword&#34;/>', '<add value=&#34;[REDACTED:secret]&#34; id=&#34;x&#34; key=&#34;DbPassword&#34;/>'],
  ['a value first holding &quot; between real quotes (as before)', '<add value="a&quot;b" key="Password"/>', '<add value="[REDACTED:secret]" key="Password"/>'],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['the next key after an escaped line break', '{"config":"password:\\nuser: bob\\n"}'],
  ['a YAML map, a list or a template after an escaped line break', '{"config":"password:\\n  user: bob\\n"}\n{"config":"password:\\n  secretKeyRef:\\n    name: db"}\n{"c":"password:\\n  - a"}\n{"c":"password:\\n  {{ .Values.pw }}"}'],
  ['a reference or a placeholder after an escaped line break', '{"config":"password:\\n  ${DB_PASS}\\n"}\n{"c":"password:\\n  ***\\n"}'],
  ['prose after an escaped line break', '{"msg":"Enter password:\\n  Login failed for user app"}\n{"msg":"password:\\n  hunter2x was rejected"}'],
  ['a format string in a JSON string', '{"code":"printf(\\"password:\\\\n  %s\\\\n\\", pw);"}'],
  ['code after an escaped line break', 'puts("Password:\\n  " + pw)'],
  ['settings about passwords quoted &#34;', '<add key=&#34;PasswordLength&#34; value=&#34;12&#34;/>\n<add value=&#34;12&#34; key=&#34;PasswordLength&#34;/>\n<add value=&quot;12&quot; key=&quot;MaxPasswordAge&quot;/>'],
  ['an empty value or wording first, quoted &quot;', '<add value=&quot;&quot; key=&quot;Password&quot;/>\n<add value=&quot;The password of the service account&quot; key=&quot;Password&quot;/>'],
  ['a value first under another name, quoted &#34;', '<input value=&#34;alice&#34; name=&#34;username&#34;>'],
  ['an HTML anchor or label quoted &#34;', '<a name=&#34;password&#34;>Password</a>\n<label for=&#34;password&#34;>Password</label>'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

describe('through the gRPC service', () => {
  const body = JSON.stringify({ config: 'db:\n  password:\n    hunter2x\n  user: app\n', page: '<add key=&#34;Password&#34; value=&#34;s3cr&#34;/>' });
  let d: ToolApp;
  beforeAll(async () => {
    const config: ToolRoute = (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    d = await startToolApp({ '/config': config }, (url) => `  - { name: get_config, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/config" } }`);
  });
  afterAll(() => d.close());

  test('the output the model reads holds neither password, and is the same JSON', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'get_config', arguments: '{}' }] });
    const output = res.results[0]!.output;
    expect(JSON.parse(output)).toEqual({ config: 'db:\n  password:\n    [REDACTED:secret]\n  user: app\n', page: '<add key=&#34;Password&#34; value=&#34;[REDACTED:secret]&#34;/>' });
  });
});

const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

/**
 * The new forms' prefixes repeated, and their near misses: each MiB under 1,000 ms of CPU, as in
 * redaction-redos.test.ts.
 */
const hostile = (): readonly string[] => [
  fill('password:\\n  '),
  fill('password:\\n  a'),
  fill('pwd:\\n\\ta\\n'),
  fill('pwd:\\r\\n a\\r\\n'),
  fill('pwd: |\\n'),
  fill('pwd:\\t\\t\\t\\t'),
  fill(`pwd:\\n ${'a\\\\'.repeat(600)}`),
  fill('pwd:\\n \\"a\\" b'),
  fill('key=&#34;password&#34; value=&#34;'),
  fill(`key=&#x22;pwd&#x22; value=&#x22;${'a'.repeat(1100)}`),
  fill(' value=&#34;'),
  fill(` value=&quot;${'a'.repeat(1100)}`),
  fill(' value=&#34;a&#34; key=&#34;'),
  fill(` value=&quot;a&quot;${' b=&#34;c&#34;'.repeat(9)} key=&quot;pwd&quot;`),
  fill('<pwd b=&#34;&#34;'),
  fill('&#34;&#34;&#x22;'),
];

test('the new forms stay linear: each hostile MiB redacted in under 1,000 ms of CPU', () => {
  expect(slowRedactions(hostile(), notLinearPast(1000))).toEqual([]);
});
