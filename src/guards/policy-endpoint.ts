import { readCapped } from '../executors/http-body';
import { terminalText } from '../events/terminal-text';
import type { Logger } from '../log';
import { linkSignal, shortened } from '../pipeline';
import type { EndpointPolicy } from './policy-types';
import { reasonText } from './reason-text';

/** What the policy endpoint is asked. */
export interface EndpointQuestion {
  readonly tool: string;
  readonly args: unknown;
  readonly sessionId: string;
  readonly tenant: string;
  readonly signal: AbortSignal;
}

/** What the policy endpoint decided (or what its failure means). */
export type EndpointAnswer =
  | { readonly action: 'allow' }
  | { readonly action: 'block'; readonly reason: string; readonly unavailable?: true }
  | { readonly action: 'ask'; readonly reason: string }
  | { readonly action: 'modify'; readonly arguments: unknown; readonly reason: string };

/** Largest answer read from the endpoint, in bytes. */
export const MAX_ENDPOINT_ANSWER_BYTES = 1024 * 1024;

/** Longest quote of a decision the endpoint answered that is none of dispatch's, in characters (cut, with `...`). */
const SHOWN_DECISION_CHARS = 100;

/** A text of the endpoint's that a failure quotes (a decision it answered that is none of dispatch's), as the model and the log read it: cut and escaped. */
const quoted = (text: string, max: number): string => terminalText(shortened(text, max));

/** The endpoint answered, wrongly; `passing` when the same question may be answered later (a 5xx, 429 or 408). */
class EndpointFailure extends Error {
  constructor(
    message: string,
    readonly passing = false,
  ) {
    super(message);
  }
}

async function ask(policy: EndpointPolicy, question: EndpointQuestion, signal: AbortSignal): Promise<EndpointAnswer> {
  const response = await fetch(policy.url, {
    method: 'POST',
    headers: { ...policy.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: question.tool, arguments: question.args, session_id: question.sessionId, tenant: question.tenant }),
    signal,
    redirect: 'manual',
  });
  if (response.status < 200 || response.status >= 300) {
    await response.body?.cancel().catch(() => undefined);
    // A busy or failing service (408, 429, 5xx) may answer the same call later; any other status will not.
    throw new EndpointFailure(`it answered HTTP ${response.status}`, response.status === 408 || response.status === 429 || response.status >= 500);
  }
  const tooLarge = () => new EndpointFailure(`its answer is over ${MAX_ENDPOINT_ANSWER_BYTES} bytes`);
  const text = await readCapped(response, MAX_ENDPOINT_ANSWER_BYTES, tooLarge, new TextDecoder());
  let body: { decision?: unknown; reason?: unknown; arguments?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new EndpointFailure('its answer is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new EndpointFailure('its answer is not a JSON object');
  const decision = typeof body.decision === 'string' ? body.decision.toLowerCase() : undefined;
  // What the model reads in a block (and the approver and the model in an ask), bounded and escaped as a denial's reason.
  const reason = (typeof body.reason === 'string' ? reasonText(body.reason) : undefined) ?? 'the policy service decided so';
  if (decision === 'allow') return { action: 'allow' };
  if (decision === 'block' || decision === 'ask') return { action: decision, reason };
  if (decision === 'modify') {
    if (body.arguments === undefined) throw new EndpointFailure('it answered modify without arguments');
    return { action: 'modify', arguments: body.arguments, reason };
  }
  throw new EndpointFailure(`its decision ${quoted(JSON.stringify(body.decision) ?? 'undefined', SHOWN_DECISION_CHARS)} is not allow, block, ask or modify`);
}

/**
 * The external policy service: `POST url` with `{tool, arguments, session_id, tenant}`, answered
 * `{decision, reason, arguments}`. A failure, a malformed answer or no answer within `timeoutMs`
 * refuses the call (fail closed), or allows it when the policy says `fail_open`: `unavailable`
 * when the service may answer later (unreachable, no answer in time, 408, 429, 5xx), so that the
 * call is refused UNAVAILABLE, recoverable, and retried, not BLOCKED "do not retry" as by a
 * decision; a service answering nonsense (a 302, no JSON, an unknown decision) refuses it BLOCKED.
 */
export function createPolicyEndpoint(policy: EndpointPolicy, logger: Logger): (question: EndpointQuestion) => Promise<EndpointAnswer> {
  return async (question) => {
    const link = linkSignal(question.signal, policy.timeoutMs);
    try {
      return await ask(policy, question, link.signal);
    } catch (error) {
      // The call was cancelled (or its deadline passed, or dispatchd shuts down): not the endpoint's failure.
      if (question.signal.aborted && !link.timedOut()) return { action: 'block', reason: 'the call was cancelled while the policy service was consulted' };
      const why = link.timedOut()
        ? `no answer within ${policy.timeoutMs} ms`
        : error instanceof EndpointFailure
          ? error.message
          : `it could not be reached (${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message})`;
      logger.warn('policy endpoint failed', { tool: question.tool, url: policy.url, reason: why, failOpen: policy.failOpen });
      if (policy.failOpen) return { action: 'allow' };
      // No answer, or a busy or failing service's: the call is refused for now (UNAVAILABLE, recoverable), not by policy.
      const passing = !(error instanceof EndpointFailure) || error.passing;
      return passing ? { action: 'block', reason: `the policy service could not be consulted (${why})`, unavailable: true } : { action: 'block', reason: `the policy service could not be consulted (${why}), so the call was refused` };
    } finally {
      link.dispose();
    }
  };
}
