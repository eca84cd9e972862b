import { leastResponseBytes, leastResultBytes, RESPONSE_SLACK_BYTES, TYPICAL_PARTS } from './result-floor';

/** The limits this check reads, as resolved, and which of them the config gave. */
interface ResponseLimits {
  readonly maxResponseBytes: number;
  readonly maxMessageBytes: number;
  readonly maxCallsPerTurn: number;
}

/**
 * Refuses a max_response_bytes too small for max_calls_per_turn results cut to their least with
 * typical ids (result-floor.ts): a full turn would run every call, then find no way to send its
 * results. Named by the limit the config gave (max_response_bytes, else max_message_bytes it
 * defaults to, else max_calls_per_turn), as resolveLimits names its keys.
 */
export function checkResponseRoom(limits: ResponseLimits, given: Partial<Record<keyof ResponseLimits, unknown>>): void {
  const least = leastResponseBytes(limits.maxCallsPerTurn);
  if (limits.maxResponseBytes >= least) return;
  const per = leastResultBytes(TYPICAL_PARTS);
  const fits = Math.max(0, Math.floor((limits.maxResponseBytes - RESPONSE_SLACK_BYTES) / per));
  const key = given.maxResponseBytes !== undefined ? 'maxResponseBytes' : given.maxMessageBytes !== undefined ? 'maxMessageBytes' : 'maxCallsPerTurn';
  const response = key === 'maxMessageBytes' ? `max_response_bytes (${limits.maxResponseBytes}, as max_message_bytes)` : `max_response_bytes (${limits.maxResponseBytes})`;
  const instead = fits > 0 ? `set max_calls_per_turn to ${fits} or less, or max_response_bytes to ${least} or more` : `set max_response_bytes to ${least} or more`;
  throw new RangeError(
    `limits.${key} leaves too little room: ${response} cannot hold the results of max_calls_per_turn (${limits.maxCallsPerTurn}) calls even cut to their least ` +
      `(${per} bytes each with typical ids, plus ${RESPONSE_SLACK_BYTES} for the answer's framing: ${least}); ${instead}`,
  );
}
