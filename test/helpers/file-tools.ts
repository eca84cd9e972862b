import type { ToolRoute } from './servers';

// Two HTTP tools on one resource, a file path: `read_file` (read-only, memoized by default) and
// `write_file` (side-effecting), for the tests of memoized reads dropped by writes.

/** The tools' config, calling the tool server at `url`. */
export const fileToolsYaml = (url: string) => `
tools:
  - name: read_file
    effect: read_only
    resource_key: /path
    input_schema: '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}'
    http: { url: "${url}/read" }
  - name: write_file
    effect: side_effect
    resource_key: /path
    input_schema: '{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}'
    http: { url: "${url}/write" }
`;

/** The tool server's routes: `/read` answers the file's text ("missing" for none), `/write` sets it. */
export function fileToolRoutes(files: Map<string, string>): Record<string, ToolRoute> {
  return {
    '/read': (req, res) => void res.writeHead(200).end(files.get((req.body.arguments as { path: string }).path) ?? 'missing'),
    '/write': (req, res) => {
      const { path, text } = req.body.arguments as { path: string; text: string };
      files.set(path, text);
      res.writeHead(200).end('written');
    },
  };
}
