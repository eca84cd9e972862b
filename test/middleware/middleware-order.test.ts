import { create } from '@bufbuild/protobuf';
import { ToolSpecSchema, Effect } from '../../gen/dispatch/v1/tool_pb';
import { applyMiddleware, type Invocation, type Middleware } from '../../src/pipeline';
import { createGuardMiddleware } from '../../src/middleware';
import { createGuardsPlugin } from '../../src/app/plugins/guards-plugin';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { NOOP_OBSERVER } from '../../src/pipeline';
import { resolveTool } from '../../src/registry';
import { allowAll } from '../../src/server';

const invocation = (): Invocation => ({
  tool: resolveTool(create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY }), '', { schema: {}, validate: (() => true) as never }),
  args: {},
  ctx: { tenant: 'x', sessionId: 's', toolCallId: 'c', attempt: 1, idempotencyKey: 'k', localKey: 'k', signal: new AbortController().signal, onAbort: () => () => undefined, deadline: Infinity, scratchDir: async () => '/tmp' },
});

test('the guard middleware runs redaction, then result verification, then memoize, first outermost', async () => {
  const log: string[] = [];
  const logged = (name: string, stage: Middleware): Middleware => (next) => {
    const inner = stage(async (inv) => {
      log.push(`${name}>`);
      const out = await next(inv);
      log.push(`<${name}`);
      return out;
    });
    return async (inv) => inner(inv);
  };
  const { stages } = createGuardMiddleware();
  expect(stages.map((s) => s.name)).toEqual(['redaction', 'result_verification', 'memoize']);
  const handler = applyMiddleware(async () => (log.push('tool'), { text: 'ok' }), stages.map((s) => logged(s.name, s.middleware)));
  await handler(invocation());
  expect(log).toEqual(['redaction>', 'result_verification>', 'memoize>', 'tool', '<memoize', '<result_verification', '<redaction']);
  log.length = 0;
  await handler(invocation());
  expect(log).toEqual(['redaction>', 'result_verification>', '<result_verification', '<redaction']);
});

test('the plugin returns the middleware in that order: redaction, result verification, memoize', async () => {
  const plugin = await createGuardsPlugin()({ config: parseConfig('tools: []', 'x.yaml'), options: {}, logger: SILENT_LOGGER, observer: () => NOOP_OBSERVER, authenticate: () => allowAll });
  try {
    const [first, second, third] = plugin.middleware ?? [];
    expect(plugin.middleware).toHaveLength(3);
    const secret = async () => ({ text: 'Bearer abcdefghijklmnop' });
    expect((await first!(secret)(invocation())).text).toBe('Bearer [REDACTED:bearer]');
    expect((await second!(secret)(invocation())).text).toBe('Bearer abcdefghijklmnop');
    const jsonTool = { ...invocation(), tool: { ...invocation().tool, spec: create(ToolSpecSchema, { name: 't', returnsJson: true }) } };
    // The excerpt is redacted before it is quoted (its escaped quotes hid values from the outer redaction).
    await expect(second!(secret)(jsonTool)).rejects.toThrow('the tool is declared to return JSON but answered text that is not JSON: "Bearer [REDACTED:bearer]"');
    let runs = 0;
    const counted = third!(async () => ({ text: `run ${++runs}` }));
    expect([(await counted(invocation())).cached, (await counted(invocation())).cached, runs]).toEqual([undefined, true, 1]);
  } finally {
    await plugin.close?.();
  }
});
