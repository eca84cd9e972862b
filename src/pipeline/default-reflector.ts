import type { Reflector } from './guards';
import { decideRetry } from './retry-policy';

/** The default reflector applies the retry decision tree and proposes no correction. */
export const retryTreeReflector: Reflector = {
  reflect({ tool, error, attempt }) {
    return decideRetry({ error, readOnly: tool.readOnly, attempt, policy: tool.retry });
  },
};
