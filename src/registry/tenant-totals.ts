import { toBinary } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { ResolvedTool } from './resolved-tool';

/** Why registering `specs` would give the tenant more than `maxTools` tools of its own, or undefined. */
export function toolCountExcess(specs: readonly ToolSpec[], own: ReadonlyMap<string, unknown> | undefined, tenant: string, maxTools: number): string | undefined {
  const added = new Set(specs.map((spec) => spec.name).filter((name) => !own?.has(name))).size;
  const total = (own?.size ?? 0) + added;
  if (total <= maxTools) return undefined;
  return `tenant "${tenant}" would have ${total} tools, over the limit of ${maxTools} (limits.max_tools_per_tenant); remove tools it no longer uses`;
}

/** Bytes of each registered tool's schema text (counted once per tool). */
const schemaBytes = new WeakMap<ToolSpec, number>();
const bytesOf = (spec: ToolSpec): number => {
  let bytes = schemaBytes.get(spec);
  if (bytes === undefined) schemaBytes.set(spec, (bytes = Buffer.byteLength(spec.inputSchema)));
  return bytes;
};

/** Bytes of schema text the tenant's tools `own` would hold with `specs` registered. */
export function schemaBytesWith(specs: readonly ToolSpec[], own: ReadonlyMap<string, ResolvedTool> | undefined): number {
  const named = new Set(specs.map((spec) => spec.name));
  let total = specs.reduce((sum, spec) => sum + bytesOf(spec), 0);
  for (const [name, tool] of own ?? []) if (!named.has(name)) total += bytesOf(tool.spec);
  return total;
}

/**
 * Bytes of each registered tool's spec besides its input schema (counted once per tool), as
 * protobuf encodes it: its description, URL, headers, pointers and names, and any field this
 * version does not know, which a spec from a newer client or replica keeps.
 */
const restBytes = new WeakMap<ToolSpec, number>();
const restBytesOf = (spec: ToolSpec): number => {
  let bytes = restBytes.get(spec);
  if (bytes === undefined) restBytes.set(spec, (bytes = toBinary(ToolSpecSchema, { ...spec, inputSchema: '' }).byteLength));
  return bytes;
};

/** Bytes of the tenant's specs besides their input schemas that its tools `own` would hold with `specs` registered. */
export function specRestBytesWith(specs: readonly ToolSpec[], own: ReadonlyMap<string, ResolvedTool> | undefined): number {
  const named = new Set(specs.map((spec) => spec.name));
  let total = specs.reduce((sum, spec) => sum + restBytesOf(spec), 0);
  for (const [name, tool] of own ?? []) if (!named.has(name)) total += restBytesOf(tool.spec);
  return total;
}

/**
 * Why registering `specs` would give the tenant's tools more than `maxBytes` of schema text, or
 * more than `maxBytes` of the rest of their specs (a description held ~1 byte of heap per byte, a
 * schema compiled ~16-20: each is bounded apart, so that descriptions never take the room of
 * schemas a tenant registered before they were counted), or undefined.
 */
export function schemaBytesExcess(specs: readonly ToolSpec[], own: ReadonlyMap<string, ResolvedTool> | undefined, tenant: string, maxBytes: number): string | undefined {
  const total = schemaBytesWith(specs, own);
  if (total > maxBytes) {
    return `tenant "${tenant}" would have ${total} bytes of input schemas, over the limit of ${maxBytes} (limits.max_schema_bytes_per_tenant); remove tools it no longer uses, or make their schemas smaller`;
  }
  const rest = specRestBytesWith(specs, own);
  if (rest <= maxBytes) return undefined;
  return `tenant "${tenant}" would have ${rest} bytes of tool specs besides their input schemas (descriptions, URLs, headers...), over the limit of ${maxBytes} (limits.max_schema_bytes_per_tenant, which bounds these and the input schemas apart); remove tools it no longer uses, or make their descriptions shorter`;
}
