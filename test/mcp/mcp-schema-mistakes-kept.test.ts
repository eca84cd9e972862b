import * as path from 'node:path';
import type { Logger } from '../../src/log';
import { startApp } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';

// The tool-file rules of 3388f44 refuse an input schema with a misspelt keyword or a root that
// accepts no object. Applied to an MCP server's tools, a third party's that served before, they
// made such a tool vanish from the model's tools on upgrade (not imported, logged). An MCP server's
// schema is taken as its server wrote it, with a warning; the config file's tools are still refused.

jest.setTimeout(30_000);

const SERVER = path.join(__dirname, 'fixtures/typo-schema-server.js');

test("an MCP server's tools are imported though their schemas misspell a keyword, on the event loop and in the worker thread", async () => {
  const warned: { message: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (message, fields) => void warned.push({ message, fields }) };
  const d = await startApp(`mcp_servers:\n  - ${JSON.stringify({ name: 'typos', command: [process.execPath, SERVER], prefix: 't_' })}\n`, { logger });
  try {
    await eventually(async () => {
      const names = (await d.registry.listTools({})).tools.map((tool) => tool.name);
      return names.includes('t_small') && names.includes('t_big');
    }, 10_000, 'both tools imported');
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 't_small', arguments: '{}' }, { id: 'b', name: 't_big', arguments: '{"city":"a long city name"}' }] });
    expect(results.map((r) => [r.isError, r.output])).toEqual([
      [false, '{}'],
      [false, '{"city":"a long city name"}'],
    ]);
    // The operator hears of each mistake, whose check is off.
    const said = warned.filter((line) => line.message === 'mcp tool imported with a schema mistake, whose check is off');
    expect(said.map((line) => [line.fields?.tool, line.fields?.problem])).toEqual(
      expect.arrayContaining([
        ['t_small', expect.stringContaining('did you mean "required"?')],
        ['t_big', expect.stringContaining('did you mean "maxLength"?')],
      ]),
    );
  } finally {
    await d.close();
  }
});

test('the same schema in the config file is refused', async () => {
  await expect(startApp(`tools:\n  - { name: small, effect: read_only, input_schema: '{"type":"object","requird":["city"]}', builtin: { name: echo } }\n`)).rejects.toThrow('did you mean "required"?');
});
