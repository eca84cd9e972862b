import { clone, create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ToolSpecSchema, WorkerExecutorSchema, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import type { Hello } from '../../../gen/dispatch/v1/worker_pb';
import { shortened } from '../../pipeline';
import { terminalText } from '../../events/terminal-text';
import { operatorToolMessage, type ToolRegistry } from '../../registry';
import { invalidArgument, RpcError } from '../../server';

/**
 * Why a worker of `tenant` may not host `name`, or undefined: the name is the operator's (a
 * config-file or MCP tool, whatever its executor), or the tenant's tool run by another executor.
 * Hosting either would send the calls meant for that tool to the worker.
 */
export function hostingRefusal(registry: ToolRegistry, tenant: string, name: string, where: string): string | undefined {
  const existing = registry.lookup(tenant, name);
  if (existing === undefined || (existing.tenant === tenant && existing.spec.executor.case === 'worker')) return undefined;
  if (existing.tenant === '') return operatorToolMessage(where, name);
  return `${where}: tool "${name}" is already registered with the ${existing.spec.executor.case} executor; remove it before a worker hosts it`;
}

/**
 * The specs a worker's `hello` registers: each gets the `worker` executor (a spec naming another
 * executor is refused), and none may take a name that {@link hostingRefusal} refuses.
 */
export function helloSpecs(hello: Hello, tenant: string, registry: ToolRegistry, maxTools: number): ToolSpec[] {
  if (hello.tools.length === 0) throw invalidArgument('hello.tools', 'hello declares no tools; a worker must host at least one');
  if (hello.tools.length > maxTools) {
    throw invalidArgument('hello.tools', `hello declares ${hello.tools.length} tools, over the limit of ${maxTools}`);
  }
  return hello.tools.map((tool, index) => {
    if (tool.executor.case !== undefined && tool.executor.case !== 'worker') {
      throw invalidArgument(`hello.tools[${index}].executor`, `tools[${index}] ("${terminalText(shortened(tool.name, 200))}"): a worker hosts its tools itself, so the executor must be worker or unset, not ${tool.executor.case}`);
    }
    const refusal = hostingRefusal(registry, tenant, tool.name, `tools[${index}]`);
    if (refusal !== undefined) throw new RpcError(grpc.status.ALREADY_EXISTS, refusal, 'ALREADY_EXISTS', { field: `hello.tools[${index}]`, tool: tool.name });
    const spec = clone(ToolSpecSchema, tool);
    spec.executor = { case: 'worker', value: create(WorkerExecutorSchema, {}) };
    return spec;
  });
}

/**
 * The tools of `specs` whose registered spec (a worker's of the same tenant) has another input
 * schema or effect: the hello replaces it, for every worker hosting the tool, and the spec stays
 * after this worker leaves. A worker author's probe saw a stray hello change a tool's schema and
 * effect under the workers still hosting it, unsaid; the caller logs it.
 */
export function changedSpecs(registry: ToolRegistry, tenant: string, specs: readonly ToolSpec[]): string[] {
  return specs.flatMap((spec) => {
    const had = registry.lookup(tenant, spec.name)?.spec;
    return had?.executor.case === 'worker' && (had.inputSchema !== spec.inputSchema || had.effect !== spec.effect) ? [spec.name] : [];
  });
}
