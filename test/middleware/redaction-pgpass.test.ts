import { redactSecrets } from '../../src/middleware';
import { json, startApp, startToolServer } from '../helpers/servers';

// A tool that prints ~/.pgpass (PostgreSQL's password file: host:port:database:user:password, one
// entry a line) sent every password to the model whole: no key names it, and a short one is too
// short for the entropy step.
test.each<[string, string, string]>([
  ['one line', 'db.internal:5432:app:admin:S3cretPassw0rd', 'db.internal:5432:app:admin:[REDACTED:secret]'],
  ['wildcards', '*:*:*:postgres:hunter2\n', '*:*:*:postgres:[REDACTED:secret]\n'],
  ['a file of several, among comments', '# prod\nlocalhost:5432:mydb:admin:pw1\n127.0.0.1:6432:*:app:p@ss!word\r\n', '# prod\nlocalhost:5432:mydb:admin:[REDACTED:secret]\n127.0.0.1:6432:*:app:[REDACTED:secret]\r\n'],
  ['in a JSON string, its lines escaped', '{"stdout":"localhost:5432:mydb:admin:pw1\\nhost2:5432:db:u:pw2\\n"}', '{"stdout":"localhost:5432:mydb:admin:[REDACTED:secret]\\nhost2:5432:db:u:[REDACTED:secret]\\n"}'],
])('a .pgpass password: %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['a time', '10:15:30:123:done'],
  ['a line with prose after it', 'see localhost:5432:mydb:admin:pw here'],
  ['a reference to the password', 'localhost:5432:mydb:admin:$PGPASSWORD'],
  ['a port that is no number', 'localhost:port:db:user:pw'],
  ['JSON and a stack frame', '{"a":1,"b":2}\n  at Foo.java:123'],
  ['an escaped colon (a field pgpass escapes is left whole)', 'localhost:5432:my\\:db:admin:pw'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

test('a .pgpass read by a tool reaches the model with its passwords redacted', async () => {
  const tools = await startToolServer({ '/cat': json({ path: '~/.pgpass', content: 'db.internal:5432:app:admin:S3cretPassw0rd\n' }) });
  const d = await startApp(`
tools:
  - name: cat
    effect: read_only
    http: { url: "${tools.url}/cat" }
`);
  try {
    const reply = await d.dispatch.dispatch({ sessionId: 'pgpass', calls: [{ id: 'c', name: 'cat', arguments: '{}' }] });
    expect(reply.results[0]!.output).toBe('{"path":"~/.pgpass","content":"db.internal:5432:app:admin:[REDACTED:secret]\\n"}');
  } finally {
    await d.app.close();
    await tools.close();
  }
});
