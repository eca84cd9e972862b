import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import type { ServiceError } from '@grpc/grpc-js';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin, type GuardsPluginOptions } from '../../src/app/plugins/guards-plugin';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import type { CallObserver, Observer } from '../../src/pipeline';
import { startApp, type TestDispatch } from '../helpers/servers';
import type { App } from '../../src/app';

/** An event the recording observer saw. */
export interface SeenEvent {
  readonly kind: 'BREAKER_STATE' | 'LOOP_WARNING' | 'LOOP_STOP' | 'APPROVAL_REQUESTED' | 'APPROVAL_RESOLVED' | 'RETRY' | 'TOOL_PRE';
  readonly tool: string;
  readonly toolCallId?: string;
  /** The breaker state, the warning text, the approval id (APPROVAL_RESOLVED: `{id} {decision}`), the retry reason. */
  readonly detail: string;
}

/** An observer that records the guard events, in order. */
export function recordingObserver(): { observer: Observer; events: SeenEvent[] } {
  const events: SeenEvent[] = [];
  const call = (toolCallId: string, tool: string): CallObserver => ({
    attempt(_attempt, name) {
      events.push({ kind: 'TOOL_PRE', tool: name, toolCallId, detail: '' });
      return { traceparent: undefined, post() {} };
    },
    retry: (_a, _d, reason) => void events.push({ kind: 'RETRY', tool, toolCallId, detail: reason }),
    loopWarning: (_a, message) => void events.push({ kind: 'LOOP_WARNING', tool, toolCallId, detail: message }),
    loopStop: (_a, message) => void events.push({ kind: 'LOOP_STOP', tool, toolCallId, detail: message }),
    replay() {},
    approvalRequested: (_a, approvalId) => void events.push({ kind: 'APPROVAL_REQUESTED', tool, toolCallId, detail: approvalId }),
    approvalResolved: (_a, approvalId, decision) => void events.push({ kind: 'APPROVAL_RESOLVED', tool, toolCallId, detail: `${approvalId} ${decision.decision}` }),
    end() {},
  });
  const observer: Observer = {
    turn: () => ({ call: (info) => call(info.toolCallId, info.tool), end() {} }),
    breakerState: (tool, state) => void events.push({ kind: 'BREAKER_STATE', tool, detail: state }),
  };
  return { observer, events };
}

/** The full app (every plugin) with a recording observer and guards built with `options`. */
export async function startGuardedApp(yaml: string, options: GuardsPluginOptions = {}): Promise<TestDispatch & { app: App; events: SeenEvent[] }> {
  const { observer, events } = recordingObserver();
  const factories = PLUGINS.map((factory) => {
    if (factory === observabilityPlugin) return async () => ({ name: 'recording-observer', observer });
    if (factory === guardsPlugin) return createGuardsPlugin(options);
    return factory;
  });
  return { ...(await startApp(yaml, {}, factories)), events };
}

/** The google.rpc.ErrorInfo reason of a failed RPC, if it carries one. */
export function errorReason(error: unknown): string | undefined {
  const bin = (error as ServiceError).metadata?.get('grpc-status-details-bin')[0];
  if (!bin) return undefined;
  const status = fromBinary(StatusSchema, bin as Buffer);
  const info = status.details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((d) => d !== undefined);
  return info?.reason;
}

/** Waits until `check` is true, polling every 10 ms, for at most `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The error JSON of a failed result's output. */
export const errorJson = (output: string) => JSON.parse(output) as { kind: string; message: string; recoverable: boolean; attempts: number };

export { closedPort } from '../helpers/servers';

/** The `tools:` block of one side-effecting, concurrency-safe HTTP tool `send` at `${url}/send`. */
export const sendToolYaml = (url: string) => `
tools:
  - name: send
    effect: side_effect
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }`;
