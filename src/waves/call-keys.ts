import { prepareArguments, unparsedRefusal } from '../arguments';
import { canonicalJson } from '../json';
import { loopOp, type PipelineDeps, type ReadArguments } from '../pipeline';
import type { ResolvedTool } from '../registry';
import { keyMaterial } from '../store';
import type { LoopOpsOf, PlannedCall, ResourceKeyOf } from './plan-waves';
import type { PlannedTool } from './planned-tool';
import { resourceKeyIn, resourceKeyOf } from './resource-key';

const reshapes = new WeakMap<ResolvedTool, boolean>();
/** A turn's calls share their session: its part of an idempotency key is left out here. */
const NO_SCOPE = { tenant: '', sessionId: '' };
/** The reading of arguments that prepareArguments refuses unparsed, for their size or depth. */
const REFUSED: unique symbol = Symbol('refused');

/** Whether preparing a tool's arguments can change their values: lenient repair, or schema defaults. */
function mayReshape(tool: ResolvedTool): boolean {
  let known = reshapes.get(tool);
  if (known === undefined) reshapes.set(tool, (known = tool.spec.lenientArguments || JSON.stringify(tool.schema).includes('"default"')));
  return known;
}

/** What a parallel turn's calls conflict on: their resource keys, their loop operations and idempotency keys. */
export interface CallKeys {
  readonly keyOf: ResourceKeyOf<PlannedTool>;
  readonly loopOf: LoopOpsOf<PlannedTool>;
  /**
   * A call's arguments as read for its loop operations, handed to the pipeline so that it does
   * not parse and canonicalise them again (undefined when they were prepared, not just parsed).
   * Each is handed to one call, after planning: nothing else holds the parsed value then.
   */
  readonly readOf: (call: PlannedCall) => ReadArguments | undefined;
}

/**
 * Reads a call's keys from its arguments as the tool receives them (parsed, repaired for a lenient
 * tool, schema defaults applied), so `"7"` and `7`, or an omitted field and its default, name one
 * resource and one loop operation. Only a lenient tool's or a schema with defaults can change them,
 * so only those (and a text JSON.parse refuses, such as a blank one) are prepared here (the
 * pipeline prepares them again). Arguments that fail validation never run: their text's resource
 * key is used, and they have no loop operation. Arguments over max_argument_bytes or nested past
 * max_argument_depth are refused before they are parsed: they have neither (canonicalising text
 * nested 50,000 deep overflowed the stack and ended the whole turn INTERNAL). A fallback receives
 * the arguments as the call's tool left them. The arguments of the last call read are kept for its
 * next key.
 */
export function callKeys(deps: PipelineDeps, tenant: string): CallKeys {
  let lastCall: PlannedCall | undefined;
  let lastArgs: unknown;
  /** Whether lastArgs is JSON.parse's value itself (not prepared: nothing reshaped it). */
  let lastParsed = false;
  const reads = new Map<PlannedCall, ReadArguments>();
  const argsOf = (call: PlannedCall, tool: ResolvedTool): unknown => {
    if (call === lastCall) return lastArgs;
    lastCall = call;
    lastArgs = undefined;
    lastParsed = false;
    // prepareArguments' own checks, before any parse.
    if (unparsedRefusal(call.arguments, deps.limits)) return (lastArgs = REFUSED);
    if (!mayReshape(tool)) {
      try {
        lastArgs = JSON.parse(call.arguments);
        lastParsed = true;
        return lastArgs;
      } catch {
        // Prepared below: a blank text is `{}` to the pipeline.
      }
    }
    try {
      lastArgs = prepareArguments(tool, call.arguments, deps.limits, undefined, tenant).args;
    } catch {
      // Never runs.
    }
    return lastArgs;
  };
  return {
    keyOf(call, planned) {
      if (planned.pointers.length === 0) return undefined;
      const args = argsOf(call, planned.tools[0]!);
      if (args === REFUSED) return undefined;
      const keyFor = (pointer: string) => (args === undefined ? resourceKeyOf(call.arguments, pointer) : resourceKeyIn(args, pointer));
      if (planned.pointers.length === 1) return keyFor(planned.pointers[0]!);
      const keys = new Set<string>();
      for (const pointer of planned.pointers) {
        const key = keyFor(pointer);
        if (key !== undefined) keys.add(key);
      }
      return [...keys];
    },
    loopOf(call, planned) {
      const args = argsOf(call, planned.tools[0]!);
      if (args === undefined || args === REFUSED) return undefined;
      const canonical = canonicalJson(args);
      const ops = planned.tools.map((tool) => loopOp(tool, args, canonical));
      if (lastParsed) reads.set(call, { tool: planned.tools[0]!, value: args, canonical, op: ops[0]! });
      // Side-effecting calls sharing an idempotency key (their key_fields agree, the rest differs)
      // run one after the other, so the later is replayed, as in sequential mode: side by side it
      // found the earlier's claim and failed IN_PROGRESS. (Without key_fields, the key is all the
      // arguments, and identical calls share a loop operation already.)
      for (const tool of planned.tools) if (!tool.readOnly && tool.keyFields.length > 0) ops.push(`\u0001${keyMaterial(NO_SCOPE, tool.name, args, tool.keyFields, canonical)}`);
      return ops;
    },
    readOf: (call) => reads.get(call),
  };
}
