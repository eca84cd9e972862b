import type { Delivery, ExecutorContext } from '../executors/executor';
import type { ResolvedTool } from '../registry';
import type { ScratchHold } from '../session';
import { hashKeyMaterial, keyMaterial, type SessionScope } from '../store';
import type { AttemptObserver } from './observer';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { SignalSource } from './signals';

/**
 * What an executor is told about its attempt. A class, not an object literal: its getters live on
 * the prototype, where a literal's getters are two closures and an accessor pair per attempt.
 */
export class AttemptContext implements ExecutorContext {
  readonly tenant: string;
  readonly sessionId: string;
  /** What the executor said of its request's delivery, if anything (see {@link ExecutorContext.delivery}). */
  delivered: Delivery | undefined = undefined;
  /** Its executor's promise stays pending past its timeout, for the tool's late answer (see ExecutorContext.lateAnswerPending). */
  latePending = false;
  /** The tool had answered in time; its output's redaction was cut off (see ExecutorContext.lateAnswerPending). */
  lateAnswered = false;
  /** The HTTP status its tool answered, when its executor said (see {@link ExecutorContext.responded}). */
  answered: number | undefined = undefined;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly turn: TurnContext,
    private readonly observer: AttemptObserver,
    readonly toolCallId: string,
    readonly attempt: number,
    private readonly key: CallKey,
    private readonly signals: SignalSource,
    readonly deadline: number,
  ) {
    this.tenant = turn.tenant;
    this.sessionId = turn.sessionId;
  }

  get idempotencyKey(): string {
    return this.key.value;
  }

  get localKey(): string {
    return this.key.local;
  }

  /** Made on first read: a tool that never looks at it costs no AbortController. */
  get signal(): AbortSignal {
    return this.signals.signal();
  }

  onAbort(listener: (reason: unknown) => void): () => void {
    return this.signals.onAbort(listener);
  }

  /** The attempt's span; its ids are drawn on first read. */
  get traceparent(): string | undefined {
    return this.observer.traceparent ?? this.turn.traceparent;
  }

  get tracestate(): string | undefined {
    return this.turn.tracestate;
  }

  delivery(state: Delivery): void {
    this.delivered = state;
  }

  responded(status: number): void {
    this.answered = status;
  }

  lateAnswerPending(answered?: boolean): void {
    this.latePending = true;
    if (answered === true) this.lateAnswered = true;
  }

  scratchDir(): Promise<string> {
    return this.deps.scratch.get(this.turn.tenant, this.turn.sessionId);
  }

  holdScratchDir(): Promise<ScratchHold> {
    return this.deps.scratch.hold(this.turn.tenant, this.turn.sessionId);
  }
}

/** A call's arguments as read already for its tool: their canonical JSON and the call's loop operation (see loopOp). */
export interface ReadKeys {
  readonly canonical: string;
  readonly op: string;
}

/** What a call's attempts know of the tool the call was made to (part of CallProgress). */
export interface CalledTool {
  /** The call's first tool, whose idempotency key its side-effecting fallbacks take (see keyToolOf). */
  readonly calledTool?: ResolvedTool;
}

/**
 * The tool whose idempotency key an attempt on `tool` takes: the tool its call was made to
 * (`called`), when `tool` is side-effecting (a fallback's claims stand for the call). Under the
 * fallback's own key, a client's retry of the turn found no record of its call, and its tool,
 * reachable again, did the action the fallback had done: the email went out twice.
 */
export const keyToolOf = (tool: ResolvedTool, called: ResolvedTool | undefined): ResolvedTool => (called !== undefined && !tool.readOnly ? called : tool);

/** Key material up to this many characters is a call's local key as it is, unhashed. */
const LOCAL_KEY_MAX = 256;

/**
 * A call's idempotency key, hashed on first read: a read-only call whose executor never reads it
 * (a builtin, say) costs no hash; nor does a short call's local key (the memo cache's).
 *
 * `op` is the call's loop operation on `tool` with `args`, when read already (a parallel turn's
 * planner did). `keyTool` names the key and its `key_fields` (keyToolOf); the memo cache's stays `tool`'s.
 */
export class CallKey {
  private material: string | undefined;
  private hashed: string | undefined;
  private localKey: string | undefined;

  constructor(
    private readonly scope: SessionScope,
    private readonly tool: ResolvedTool,
    private readonly args: unknown,
    readonly canonicalArgs: string,
    readonly op?: string,
    private readonly keyTool: ResolvedTool = tool,
  ) {}

  private get text(): string {
    return (this.material ??= keyMaterial(this.scope, this.keyTool.name, this.args, this.keyTool.keyFields, this.canonicalArgs));
  }

  get value(): string {
    return (this.hashed ??= hashKeyMaterial(this.text));
  }

  /**
   * The memo cache's key: the material of every argument (the idempotency key's own unless the
   * tool names `key_fields`) as it is when short (it holds NULs, which no hash does), else hashed.
   */
  get local(): string {
    return (this.localKey ??= this.localOf());
  }

  private localOf(): string {
    if (this.tool.keyFields.length > 0 || this.keyTool !== this.tool) {
      const all = keyMaterial(this.scope, this.tool.name, this.args, [], this.canonicalArgs);
      return all.length <= LOCAL_KEY_MAX ? all : hashKeyMaterial(all);
    }
    const text = this.text;
    return text.length <= LOCAL_KEY_MAX ? text : this.value;
  }
}
