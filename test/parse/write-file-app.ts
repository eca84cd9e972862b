import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

/**
 * A dispatch app with one HTTP tool, `write_file { path, content }`, whose server answers the
 * arguments it received: how the *-values tests show a parsed call reaching its tool as written.
 * Started before the describe block's tests, closed after them.
 */
export function writeFileApp(): { readonly d: () => TestDispatch; readonly tools: () => ToolServer } {
  let tools: ToolServer;
  let d: TestDispatch;
  beforeAll(async () => {
    tools = await startToolServer({ '/write': (req, res) => void res.writeHead(200).end(JSON.stringify(req.body.arguments)) });
    d = await startApp(`
tools:
  - name: write_file
    effect: read_only
    input_schema: '{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}'
    http: { url: "${tools.url}/write" }
`);
  });
  afterAll(async () => {
    await d?.close();
    await tools?.close();
  });
  return { d: () => d, tools: () => tools };
}
