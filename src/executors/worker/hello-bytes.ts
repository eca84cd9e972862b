import type { ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { shortened } from '../../pipeline';
import { schemaBytesWith, specRestBytesWith } from '../../registry';

/** The largest tools a refusal names. */
const NAMED_TOOLS = 3;

/** The two totals limits.max_schema_bytes_per_tenant bounds apart (see tenant-totals.ts), and what mends each. */
const TOTALS = [
  { what: 'bytes of input schemas', bytesOf: (spec: ToolSpec) => schemaBytesWith([spec], undefined), mend: 'make their schemas smaller' },
  { what: 'bytes of tool specs besides their input schemas (descriptions, pointers, names...)', bytesOf: (spec: ToolSpec) => specRestBytesWith([spec], undefined), mend: 'make their descriptions shorter' },
] as const;

/**
 * Why a hello's tools could never be registered, or undefined: by themselves, before the tenant's
 * other tools count, they hold more than `maxBytes` (limits.max_schema_bytes_per_tenant) of input
 * schemas, or of the rest of their specs. The registry's RESOURCE_EXHAUSTED (retried, as a tenant
 * may free room) would refuse each reconnection of the worker alike; this is INVALID_ARGUMENT,
 * which workers do not retry (examples/), naming how far over it is and the largest tools.
 */
export function helloBytesRefusal(specs: readonly ToolSpec[], maxBytes: number): string | undefined {
  for (const { what, bytesOf, mend } of TOTALS) {
    const sizes = specs.map((spec, index) => ({ index, name: spec.name, bytes: bytesOf(spec) }));
    const total = sizes.reduce((sum, size) => sum + size.bytes, 0);
    if (total <= maxBytes) continue;
    const largest = sizes
      .sort((a, b) => b.bytes - a.bytes || a.index - b.index)
      .slice(0, NAMED_TOOLS)
      .map((size) => `tools[${size.index}] ("${shortened(size.name, 64)}") ${size.bytes}`);
    return (
      `hello declares ${specs.length} tool${specs.length === 1 ? '' : 's'} holding ${total} ${what}, ${total - maxBytes} over the limit of ${maxBytes} ` +
      `that all of a tenant's tools may hold (limits.max_schema_bytes_per_tenant): no retry can register them. Largest: ${largest.join(', ')}; ` +
      `${mend}, or host fewer tools on one worker`
    );
  }
  return undefined;
}

/**
 * Why a hello's tools could never be registered for their number, or undefined: their distinct
 * names alone are more than `maxTools` (limits.max_tools_per_tenant), before the tenant's other
 * tools count. Like {@link helloBytesRefusal}, INVALID_ARGUMENT rather than the registry's retried
 * RESOURCE_EXHAUSTED, which would refuse each reconnection of the worker alike.
 */
export function helloCountRefusal(specs: readonly ToolSpec[], maxTools: number): string | undefined {
  const distinct = new Set(specs.map((spec) => spec.name)).size;
  if (distinct <= maxTools) return undefined;
  return (
    `hello declares ${distinct} distinct tool names, ${distinct - maxTools} over the limit of ${maxTools} tools a tenant may own ` +
    `(limits.max_tools_per_tenant): no retry can register them. Host at most ${maxTools} tools on one worker, or raise the limit`
  );
}
