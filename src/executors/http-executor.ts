import type { Agent, fetch as fetchFn, Response } from 'undici';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, suggestionFor } from '../errors';
import { createDestinationPolicy, type DestinationPolicy } from '../registry';
import { DEFAULT_LIMITS } from '../options';
import { createAnswerBudget } from './answer-budget';
import type { Executor, ExecutorContext } from './executor';
import { decoderFor, readCapped, readExcerpt } from './http-body';
import { fromHttpStatus, fromTransportError } from './http-errors';
import { requestHeaders, urlCredentials } from './http-headers';
import type { reportingSent as reportingSentFn } from './http-sent';
import type { HttpTransportOptions } from './http-transport';
import { undici } from './undici-lazy';

/** Options of the HTTP executor. */
export interface HttpExecutorOptions {
  /**
   * Largest 2xx response body read, in bytes, while its text is within maxAnswerChars; past it the
   * call fails UNEXPECTED after it ran, and the message names limits.max_tool_output_chars x 4,
   * which the app passes.
   * @default 64 MiB (limits.max_tool_output_chars at its default, 16 Mi chars, x 4)
   */
  readonly maxResponseBytes?: number;
  /**
   * Characters of a 2xx answer read: once its text is longer the rest is not read (its download
   * is cancelled) and the output cap cuts it, with its warning, as any longer output; the app passes
   * limits.max_tool_output_chars. @default 16 Mi (16777216)
   */
  readonly maxAnswerChars?: number;
  /**
   * Bytes of 2xx answers read at once by every call of this executor (the app's one: the replica's);
   * a call whose next chunk would pass it waits for room, until its deadline (see createAnswerBudget).
   * @default limits.max_answer_bytes_in_flight's default, 64 MiB
   */
  readonly maxAnswerBytesInFlight?: number;
  /**
   * Of those, the bytes read at once by the calls of one tenant (the calling tenant, whoever owns
   * the tool), beyond its oldest answer being read: one tenant's slow answers cannot hold the room
   * every other tenant's calls need. @default a quarter of maxAnswerBytesInFlight (at least 1)
   */
  readonly maxAnswerBytesInFlightPerTenant?: number;
  /** Most bytes of a non-2xx answer's body read, for the error's message. @default 4096 */
  readonly errorExcerptBytes?: number;
  /**
   * Longest wait for those bytes, in ms (at most half the time the call has left): the status is
   * the answer, the body only explains it. @default 1000
   */
  readonly errorExcerptWaitMs?: number;
  /** Same-origin 307/308 redirects followed; redirects to another origin never are. @default 3 */
  readonly maxRedirects?: number;
  /**
   * Where the tools of tenants (registered by RPC) may connect, checked at each new connection
   * against the addresses a host name resolves to; the config file's tools are not checked.
   * @default the built-in rules alone (link-local, metadata and unspecified addresses refused)
   */
  readonly policy?: DestinationPolicy;
  /** How the tools' connections are made (undici's own timeouts). */
  readonly transport?: HttpTransportOptions;
}

/** The HTTP executor, and what readies it before its first call. */
export interface HttpExecutor extends Executor {
  /** Loads undici and makes the agents, so that no call waits for them (an HTTP tool was registered). */
  prepare(): void;
}

/**
 * Calls a tool over HTTP: `POST url` with `{tool, arguments, tool_call_id, session_id, attempt,
 * idempotency_key}` and the `Idempotency-Key` and `traceparent` headers. Only the headers in the
 * tool's spec are sent as credentials. A tenant's tool connects only where `options.policy` allows.
 */
export function createHttpExecutor(options: HttpExecutorOptions = {}): HttpExecutor {
  const maxBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
  const maxChars = options.maxAnswerChars ?? DEFAULT_LIMITS.maxToolOutputChars;
  const inFlight = options.maxAnswerBytesInFlight ?? DEFAULT_LIMITS.maxAnswerBytesInFlight;
  const budget = createAnswerBudget(inFlight, options.maxAnswerBytesInFlightPerTenant ?? Math.max(1, Math.floor(inFlight / 4)));
  const maxRedirects = options.maxRedirects ?? 3;
  const excerptBytes = options.errorExcerptBytes ?? 4096;
  const excerptWaitMs = options.errorExcerptWaitMs ?? 1000;
  const policy = options.policy ?? createDestinationPolicy();
  // Made by prepare, or else at the first call, with undici (undici-lazy.ts): the agents of the config file's tools and
  // of the tenants', what reports a request sent, and fetch.
  let http: { readonly trusted: Agent; readonly guarded: Agent; readonly reportingSent: typeof reportingSentFn; readonly fetch: typeof fetchFn } | undefined;
  const load = () => {
    const { createHttpTransport } = require('./http-transport') as typeof import('./http-transport');
    const { reportingSent } = require('./http-sent') as typeof import('./http-sent');
    return (http = { trusted: createHttpTransport(undefined, options.transport), guarded: createHttpTransport(policy, options.transport), reportingSent, fetch: undici().fetch });
  };
  return {
    prepare: () => void (http ?? load()),
    async execute(tool, args, ctx: ExecutorContext) {
      if (tool.spec.executor.case !== 'http') throw new Error('not an http tool');
      const { url, headers } = tool.spec.executor.value;
      const body = JSON.stringify({
        tool: tool.name,
        arguments: args,
        tool_call_id: ctx.toolCallId,
        session_id: ctx.sessionId,
        attempt: ctx.attempt,
        idempotency_key: ctx.idempotencyKey,
      });
      const sentHeaders = requestHeaders(headers, ctx);
      const { url: bare, authorization } = urlCredentials(url);
      if (authorization !== undefined && !sentHeaders.has('authorization')) sentHeaders.set('authorization', authorization);
      // Until undici hands the request to a connected socket, no failure can have run the tool.
      let sent = false;
      ctx.delivery?.('pending');
      const { trusted, guarded, reportingSent, fetch } = http ?? load();
      const dispatcher = reportingSent(tool.tenant === '' ? trusted : guarded, () => {
        if (sent) return;
        sent = true;
        ctx.delivery?.('sent');
      });
      let target = bare;
      for (let hop = 0; ; hop++) {
        let response: Response;
        try {
          response = await fetch(target, { method: 'POST', body, headers: sentHeaders, signal: ctx.signal, redirect: 'manual', dispatcher });
        } catch (error) {
          throw fromTransportError(error, target, sent);
        }
        if (response.status >= 300 && response.status < 400) {
          await response.body?.cancel().catch(() => undefined);
          const location = response.headers.get('location');
          const next = location ? parsedUrl(location, target) : undefined;
          const sameOrigin = next !== undefined && next.origin === new URL(target).origin;
          if (!sameOrigin || (response.status !== 307 && response.status !== 308) || hop >= maxRedirects) {
            ctx.responded?.(response.status);
            throw new DispatchError(ErrorKind.TOOL_ERROR, redirectRefusal(response.status, next !== undefined, sameOrigin, maxRedirects), { phase: 'after' });
          }
          target = next.toString();
          continue;
        }
        // The answer acted on (a redirect followed is not): the attempt's span carries its status.
        ctx.responded?.(response.status);
        if (response.status < 200 || response.status >= 300) {
          const excerpt = await readExcerpt(response, excerptBytes, Math.min(excerptWaitMs, (ctx.deadline - Date.now()) / 2));
          throw fromHttpStatus(response.status, excerpt, response.headers.get('retry-after'));
        }
        try {
          // It ran: the idempotency record keeps this failure, and the model is told not to repeat it.
          const tooLarge = () =>
            new DispatchError(ErrorKind.UNEXPECTED, `the tool ran (HTTP ${response.status}) but its answer exceeded ${maxBytes} bytes (limits.max_tool_output_chars x 4) and was not read`, {
              phase: 'after',
              suggestion: suggestionFor(ErrorKind.UNEXPECTED, { phase: 'after', readOnly: tool.readOnly }),
            });
          return await readCapped(response, maxBytes, tooLarge, decoderFor(response), { maxChars, budget, tenant: ctx.tenant, signal: ctx.signal });
        } catch (error) {
          throw error instanceof DispatchError ? error : fromTransportError(error, target);
        }
      }
    },
  };
}

/**
 * `location` resolved against `base`, or undefined when it is no URL (a tool's header, so anything).
 * undici gives header values as Latin-1, but servers send a non-ASCII Location as raw UTF-8: read
 * as UTF-8 when it is (as browsers and undici's own redirects do), it names the resource meant.
 */
function parsedUrl(location: string, base: string): URL | undefined {
  try {
    return new URL(/[^\x00-\x7f]/.test(location) ? utf8OrAsIs(location) : location, base);
  } catch {
    return undefined;
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const utf8OrAsIs = (latin1: string): string => {
  try {
    return strictUtf8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
};

/** Why a 3xx answer ends the call: what it was, and why dispatch did not follow it. */
function redirectRefusal(status: number, located: boolean, sameOrigin: boolean, maxRedirects: number): string {
  if (status === 304) return 'the tool answered HTTP 304 (Not Modified), which is no answer to a call';
  if (!located) return `the tool answered a redirect (HTTP ${status}) without a valid Location`;
  if (!sameOrigin) return `the tool answered a redirect (HTTP ${status}) to another origin, which dispatch does not follow`;
  if (status !== 307 && status !== 308) return `the tool answered a redirect (HTTP ${status}) that would not resend the request as it was (only 307 and 308 are followed)`;
  return `the tool redirected more than ${maxRedirects} times (HTTP ${status}); dispatch follows at most ${maxRedirects} redirects`;
}
