import { create } from '@bufbuild/protobuf';
import { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { prepareArguments } from '../../src/arguments';
import { createSchemaCompiler, resolveTool } from '../../src/registry';

/**
 * What a tool named `name` with input `schema` says to arguments: the refusal's message, or
 * `accepted`. Its schema compiler is closed after the calling file's tests (call it at the top of a
 * test file).
 */
export function refusalOf(name: string, schema: object): (args: unknown) => string {
  const compiler = createSchemaCompiler(256 * 1024);
  afterAll(() => compiler.close());
  const text = JSON.stringify(schema);
  const tool = resolveTool(create(ToolSpecSchema, { name, inputSchema: text }), '', compiler.compile(text));
  return (args) => {
    try {
      prepareArguments(tool, JSON.stringify(args), { maxArgumentBytes: 1 << 20, maxArgumentDepth: 64 });
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
}
