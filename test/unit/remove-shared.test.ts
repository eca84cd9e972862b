import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createSchemaCompiler, createToolRegistry, type RegistryChange } from '../../src/registry';

const spec = (name: string, description = '') =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema: '{}', executor: { case: 'builtin', value: { name: 'echo' } } });
const registry = () => createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin']));

describe('ToolRegistry.removeShared (RemoveTool)', () => {
  it('removes the tool here only once every listener has shared the removal', async () => {
    const r = registry();
    r.register([spec('t')], { tenant: 'acme' });
    const seen: string[] = [];
    let share!: () => void;
    r.onChange((change) => {
      if (change.type !== 'remove') return;
      seen.push(`remove ${change.name} while registered: ${r.lookup('acme', 't') !== undefined}`);
      return new Promise<void>((resolve) => (share = resolve));
    });
    const removing = r.removeShared('acme', 't');
    await Promise.resolve();
    expect(r.lookup('acme', 't')).toBeDefined();
    share();
    await expect(removing).resolves.toBe(true);
    expect(r.lookup('acme', 't')).toBeUndefined();
    expect(seen).toEqual(['remove t while registered: true']);
    await expect(r.removeShared('acme', 't')).resolves.toBe(false);
  });

  it('keeps the tool when a listener fails, and throws its error: asked again, it is removed', async () => {
    const r = registry();
    r.register([spec('t')], { tenant: 'acme' });
    let fail = true;
    const removals: RegistryChange[] = [];
    r.onChange((change) => {
      if (change.type !== 'remove') return;
      removals.push(change);
      return fail ? Promise.reject(new Error('NOREPLICAS')) : Promise.resolve();
    });
    r.onChange(() => undefined);
    await expect(r.removeShared('acme', 't')).rejects.toThrow('NOREPLICAS');
    expect(r.lookup('acme', 't')).toBeDefined();
    fail = false;
    await expect(r.removeShared('acme', 't')).resolves.toBe(true);
    expect(r.lookup('acme', 't')).toBeUndefined();
    expect(removals).toHaveLength(2);
  });

  it('keeps a tool registered again while its removal was shared (a worker said hello again)', async () => {
    const r = registry();
    r.register([spec('t', 'v1')], { tenant: 'acme' });
    r.onChange((change) => {
      if (change.type === 'remove') r.register([spec('t', 'v2')], { tenant: 'acme', replace: true });
    });
    await expect(r.removeShared('acme', 't')).resolves.toBe(true);
    expect(r.lookup('acme', 't')?.spec.description).toBe('v2');
  });
});
