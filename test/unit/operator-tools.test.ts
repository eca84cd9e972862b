import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';

const spec = (name: string, description: string) =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema: '{}', executor: { case: 'builtin', value: { name: 'echo' } } });
const registry = () => createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin']));

describe("the operator's tools (tenant \"\") in the registry", () => {
  it("win over a tenant's tool of the same name registered before the name became the operator's (an MCP server listing it later)", () => {
    const r = registry();
    r.register([spec('files_echo', 'the tenant')], { tenant: 'acme' });
    r.register([spec('files_echo', 'the operator')], { tenant: '', replace: true });
    expect(r.lookup('acme', 'files_echo')?.spec.description).toBe('the operator');
    expect(r.list('acme').map((t) => `${t.name}: ${t.spec.description}`)).toEqual(['files_echo: the operator']);
    // The tenant's own stays its own: it can remove it.
    expect(r.remove('acme', 'files_echo')).toBe(true);
    expect(r.lookup('acme', 'files_echo')?.spec.description).toBe('the operator');
  });

  it("refuses a tenant's registration of an operator's tool name, replace or not", () => {
    const r = registry();
    r.register([spec('send_email', 'the operator')], { tenant: '' });
    for (const replace of [false, true]) {
      const error = (() => {
        try {
          r.register([spec('send_email', 'the tenant')], { tenant: 'acme', replace });
        } catch (e) {
          return e as RegistryError;
        }
      })();
      expect(error).toBeInstanceOf(RegistryError);
      expect(error).toMatchObject({ code: 'exists', message: 'tools[0]: tool "send_email" is the operator\'s (from the config file or an MCP server); a tenant cannot register, replace or host a tool of that name' });
    }
    expect(r.list('acme').map((t) => t.spec.description)).toEqual(['the operator']);
  });

  it("ignores another replica's change of the operator's tools, and applies another's registration of such a name hidden", () => {
    const r = registry();
    r.register([spec('send_email', 'the operator')], { tenant: '' });
    r.applyRemote({ type: 'register', tenant: '', specs: [spec('send_email', 'another replica'), spec('extra', 'another replica')] });
    r.applyRemote({ type: 'remove', tenant: '', name: 'send_email' });
    expect(r.list('').map((t) => `${t.name}: ${t.spec.description}`)).toEqual(['send_email: the operator']);
    // A replica whose config lacks send_email let a tenant register it: kept, behind the operator's.
    r.applyRemote({ type: 'register', tenant: 'acme', specs: [spec('send_email', 'the tenant')] });
    expect(r.lookup('acme', 'send_email')?.spec.description).toBe('the operator');
    expect(r.remove('acme', 'send_email')).toBe(true);
  });
});
