import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { httpClientAttributes } from './http-client-attributes';
import { ATTR } from './span-attributes';

/** A tool as the observers look it up: the registry's ResolvedTool. */
export interface LookedUpTool {
  readonly readOnly: boolean;
  /** Its executor: a builtin's attempts are INTERNAL spans, an HTTP tool's carry the HTTP client attributes. */
  readonly spec?: Pick<ToolSpec, 'executor'>;
}

/**
 * Attempt numbers whose start attributes a target keeps: a call makes at most 5 attempts
 * (MAX_RECOVERY_ATTEMPTS), a few more counting fallbacks; later ones are built per attempt.
 */
const KEPT_ATTEMPTS = 8;

/**
 * What an attempt's span takes from its tool, made once per registered tool: the tool's effect,
 * the span's kind (INTERNAL for a builtin, which runs in this process; CLIENT for a tool reached
 * over HTTP, through a worker or an MCP server) and its start attributes by attempt number, built
 * on first use and shared by every attempt of that number after (the tracer never changes them):
 * an attempt's span allocates no attribute object.
 */
export class AttemptTarget {
  private readonly asked: Attributes[] = [];
  private readonly instead: Attributes[] = [];

  constructor(
    readonly name: string,
    readonly effect: string,
    readonly kind: SpanKind,
    private readonly http: Attributes | undefined,
    /** Keeps the attributes it builds (a registered tool's target, itself kept). */
    private readonly keeps: boolean,
  ) {}

  /** The start attributes of attempt `attempt`; `fallback`: the call asked for another tool, so the span names this one. */
  attributes(attempt: number, fallback: boolean): Attributes {
    const kept = fallback ? this.instead : this.asked;
    let attributes = kept[attempt];
    if (attributes === undefined) {
      attributes = { [ATTR.attempt]: attempt, [ATTR.effect]: this.effect };
      if (fallback) attributes[ATTR.toolName] = this.name;
      Object.assign(attributes, this.http);
      if (this.keeps && attempt < KEPT_ATTEMPTS) kept[attempt] = attributes;
    }
    return attributes;
  }
}

const targets = new WeakMap<LookedUpTool, AttemptTarget>();

/** A looked-up tool's effect as spans and events name it: `read_only`, `side_effect`, or '' for no tool. */
export const effectOf = (tool: LookedUpTool | undefined): string => (tool === undefined ? '' : tool.readOnly ? 'read_only' : 'side_effect');

/**
 * The target of attempts on `tool` as looked up under `name`, kept with the registered tool (a
 * registration replaced or removed takes its target with it); a name no tool has gets one of its
 * own, CLIENT, with effect '' (ObserverEnv.effectOf).
 */
export function attemptTargetOf(tool: LookedUpTool | undefined, name: string): AttemptTarget {
  if (tool === undefined) return targetOfEffect(name, '');
  let target = targets.get(tool);
  if (target === undefined) {
    const executor = tool.spec?.executor;
    const http = executor?.case === 'http' ? httpClientAttributes(executor.value.url) : undefined;
    target = new AttemptTarget(name, effectOf(tool), executor?.case === 'builtin' ? SpanKind.INTERNAL : SpanKind.CLIENT, http, true);
    targets.set(tool, target);
  }
  return target;
}

/** An unregistered target of `effect` (an ObserverEnv that cannot look tools up). */
export const targetOfEffect = (name: string, effect: string): AttemptTarget => new AttemptTarget(name, effect, SpanKind.CLIENT, undefined, false);
