import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { repairArguments } from '../../src/arguments/repair';
import { startApp, type TestDispatch } from '../helpers/servers';

// A schema property named as an Object.prototype member ("constructor", "toString", "valueOf")
// that the model did not send: lenient repair read the inherited member as the field's value
// (`key in copy`), so a repair elsewhere in the call made one up. An array field became
// [Object] and reached the tool as "constructor":[null]; a string field held a function and the
// repaired call was refused INVALID_ARGUMENTS. Validation looks at own properties only
// (schema-codegen's ownProperties), as the repair now does.

const schema = {
  type: 'object',
  properties: { n: { type: 'number' }, constructor: { type: 'array' }, toString: { type: 'string' }, valueOf: { type: 'object', properties: { a: { type: 'number' } } } },
  additionalProperties: false,
};

test('a field the arguments do not hold is not repaired from what objects inherit', () => {
  const repaired = repairArguments({ n: '5' }, schema);
  expect(repaired.value).toEqual({ n: 5 });
  expect(Object.keys(repaired.value as object)).toEqual(['n']);
  expect(repaired.repairs).toEqual(['repaired /n: "5" -> 5 (string to number)']);
});

test('a field of such a name that the arguments hold is repaired as any other', () => {
  const repaired = repairArguments(JSON.parse('{"constructor":"x","toString":"t","valueOf":{"a":"2"}}'), schema);
  expect(JSON.stringify(repaired.value)).toBe('{"constructor":["x"],"toString":"t","valueOf":{"a":2}}');
});

describe('over the wire', () => {
  let raw: string[] = [];
  let tool: Server;
  let d: TestDispatch;
  beforeAll(async () => {
    tool = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        raw.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end('done');
      });
    });
    await new Promise<void>((resolve) => tool.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(tool.address() as AddressInfo).port}`;
    d = await startApp(`
tools:
  - name: race
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"laps":{"type":"integer"},"constructor":{"type":"array"}},"additionalProperties":false}'
    http: { url: "${url}/race" }
  - name: label
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"count":{"type":"integer"},"toString":{"type":"string"}}}'
    http: { url: "${url}/label" }
`);
  });
  afterAll(async () => {
    await d.close();
    tool.closeAllConnections();
    await new Promise<void>((resolve) => tool.close(() => resolve()));
  });
  beforeEach(() => {
    raw = [];
  });
  const call = (name: string, args: string, sessionId: string) => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name, arguments: args }] }).then((r) => r.results[0]!);
  const received = () => raw.map((body) => JSON.stringify((JSON.parse(body) as { arguments: unknown }).arguments));

  test('a repaired call reaches the tool with the fields the model sent, and no other', async () => {
    const result = await call('race', '{"laps":"3"}', 'inherited-1');
    // Before: {"laps":3,"constructor":[null]}, with a warning "repaired /constructor: undefined -> [null]".
    expect([result.isError, result.output]).toEqual([false, 'done']);
    expect(result.warnings).toEqual(['repaired /laps: "3" -> 3 (string to number)']);
    expect(received()).toEqual(['{"laps":3}']);
  });

  test('a repairable call is not refused for a field it does not hold', async () => {
    const result = await call('label', '{"count":"2"}', 'inherited-2');
    // Before: INVALID_ARGUMENTS naming /count (the repaired arguments held a function at /toString).
    expect([result.isError, result.output]).toEqual([false, 'done']);
    expect(received()).toEqual(['{"count":2}']);
  });
});
