import type { ResourceHolds, TurnContext } from './pipeline-deps';
import type { TurnSignal } from './signals';

/** Every field of a TurnContext, present (undefined when the turn has none). */
type EveryField = { readonly [K in keyof Required<TurnContext>]: TurnContext[K] };

/**
 * `turn` with its own `signal` and `resources` (a parallel turn's, then each wave's): every field
 * copied by name, so that all such copies share one shape. A spread of the turn went the slow way
 * (~1% of a parallel turn's CPU in a profile, for its two copies). The type names every field of
 * TurnContext, so a field added there must be copied here. `toldWaits` is the same set, shared.
 */
export function copyTurn(turn: TurnContext, signal: TurnSignal, resources: ResourceHolds | undefined): TurnContext {
  const copy: EveryField = {
    tenant: turn.tenant,
    sessionId: turn.sessionId,
    turn: turn.turn,
    signal,
    deadline: turn.deadline,
    received: turn.received,
    draining: turn.draining,
    shutdown: turn.shutdown,
    offeredTools: turn.offeredTools,
    interactive: turn.interactive,
    observer: turn.observer,
    traceparent: turn.traceparent,
    tracestate: turn.tracestate,
    scope: turn.scope,
    resources,
    toldWaits: turn.toldWaits,
  };
  return copy;
}
