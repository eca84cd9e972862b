import { create } from '@bufbuild/protobuf';
import { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { prepareArguments } from '../../src/arguments';
import { createSchemaCompiler, resolveTool } from '../../src/registry';

// `unevaluatedProperties: false` is how a 2020-12 schema composed with allOf or $ref says "no
// other properties" (additionalProperties cannot see the properties its allOf declares). Its
// refusal named no property: it quoted the whole object, cut at 200 characters, so with a long
// field first the model could not see which key to drop. It is named now, as for
// additionalProperties.

const compiler = createSchemaCompiler(256 * 1024);
afterAll(() => compiler.close());

const schema = JSON.stringify({
  type: 'object',
  allOf: [{ $ref: '#/$defs/base' }],
  properties: { query: { type: 'string' } },
  unevaluatedProperties: false,
  $defs: { base: { properties: { limit: { type: 'integer' } } } },
});
const tool = resolveTool(create(ToolSpecSchema, { name: 'search', inputSchema: schema }), '', compiler.compile(schema));
const refusal = (args: string) => {
  try {
    prepareArguments(tool, args, { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 });
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

test('the properties the schema declares, in allOf or beside it, are accepted', () => {
  expect(refusal('{"query":"q","limit":3}')).toBe('accepted');
});

test('a property no subschema evaluates is named, however long the fields before it', () => {
  const args = JSON.stringify({ query: 'x'.repeat(300), colour: 'red' });
  // Before: '/: got {"query":"xxx... (object); must NOT have unevaluated properties; expected {...}'.
  expect(refusal(args)).toBe('invalid arguments: /: unexpected property "colour" (the schema allows no other properties); the tool was not executed');
});
