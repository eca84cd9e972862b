import { randomBytes } from 'node:crypto';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC error code of the stand-in for an answer too large: in the application's range, outside
 * the codes JSON-RPC and MCP define (-32768 to -32000).
 */
export const ANSWER_TOO_LARGE_CODE = -31_413;

/** Proves a stand-in was made by this process: a server cannot guess it, so it cannot forge one. */
const NONCE = randomBytes(16).toString('hex');

/** The `data` of a stand-in. */
interface StandInData {
  readonly dispatchNonce: string;
  readonly maxBytes: number;
}

type RequestId = string | number;

/**
 * The id of the JSON-RPC request a POST body carries, or undefined when it carries none (a
 * notification, a response, a body that is not JSON). The SDK sends one message per POST.
 */
export function requestIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'string') return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!message || typeof message !== 'object' || Array.isArray(message) || !('method' in message) || !('id' in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * The JSON-RPC error response that the fetch hands the SDK in place of an answer to request `id`
 * past `maxBytes`: the SDK routes it, by id, to that request alone, however the answer came (a
 * JSON body or an SSE stream, whose failure the SDK would report to `onerror` only).
 */
export function answerTooLargeResponse(id: RequestId, message: string, maxBytes: number): string {
  const data: StandInData = { dispatchNonce: NONCE, maxBytes };
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: ANSWER_TOO_LARGE_CODE, message, data } });
}

/** The bound `error` reports when it is a stand-in made in this process; undefined for any other, a server's too. */
export function answerTooLargeBound(error: McpError): number | undefined {
  if (error.code !== ANSWER_TOO_LARGE_CODE) return undefined;
  const data = error.data as Partial<StandInData> | undefined;
  return data?.dispatchNonce === NONCE && typeof data.maxBytes === 'number' ? data.maxBytes : undefined;
}
