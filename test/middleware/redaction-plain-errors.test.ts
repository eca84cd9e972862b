import { startApp } from '../helpers/servers';

// Found in review: redaction replaced secrets in the message of a DispatchError a tool answered,
// but passed any other error as it was; the pipeline then made it UNEXPECTED, "the tool crashed:
// <its message>", and the message reached the model, the events and the memory unredacted. A
// built-in of an embedder (or a library it calls) throws plain Errors, which often quote a
// connection string or a request's headers.

const DSN = 'postgres://admin:S3cretPassw0rd@db.internal/app';

test("a plain Error a tool throws reaches the model with its secrets redacted", async () => {
  const builtins = new Map([['leaky', async (): Promise<string> => Promise.reject(new Error(`could not connect to ${DSN}`))]]);
  const d = await startApp('tools:\n  - { name: leaky, effect: read_only, input_schema: \'{"type":"object"}\', builtin: { name: leaky } }', { pipeline: { builtins } });
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'leaky', arguments: '{}' }] });
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.output).toContain('could not connect to postgres://admin:[REDACTED:secret]@db.internal/app');
    expect(results[0]!.output).not.toContain('S3cretPassw0rd');
  } finally {
    await d.app.close();
  }
});
