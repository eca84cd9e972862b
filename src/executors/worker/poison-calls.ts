import { hash } from 'node:crypto';
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';
import type { Logger } from '../../log';
import type { EndReason } from './stream-end';

/** How long a worker stopping under a call counts against the call's arguments, and how long a call is then kept from workers. */
export const POISON_WINDOW_MS = 10 * 60_000;
/** The most arguments remembered (the oldest forgotten first): a fleet restarting under thousands of calls costs a bounded map. */
export const MAX_POISON_ENTRIES = 10_000;
/** The workers a call's arguments may see stop under them before they are kept from the others. */
const STOPS_TO_KEEP_OUT = 2;

/** A call as a worker held it: enough to know it again with the same arguments. */
export interface HeldCall {
  readonly tool: string;
  /** The validated arguments as sent (the assignment's JSON text). */
  readonly args: string;
}

/**
 * Calls whose workers stop under them: a call whose arguments crash or hang the worker running it
 * (an input its parser chokes on, a request that eats its memory) was retried on the next worker
 * (a read-only call's second attempt; a model calling again), and every worker it reached died.
 * A worker stream lost or reset by the worker's side (byWorker) or silent past its heartbeat
 * (hung) counts against each call it held, by tenant, tool and arguments (not session: the same
 * input from another agent stops workers as well); a half-close (a worker stopping) or dispatch's
 * own ending does not. The second such stop within POISON_WINDOW_MS fails the call UNEXPECTED,
 * not recoverable, and keeps those arguments from every worker here for POISON_WINDOW_MS.
 */
export interface PoisonCalls {
  /** The error for a held call whose worker stopped: `gone` as it is, or, at its arguments' second stop, that they are kept out. */
  stopped(tenant: string, workerId: string, call: HeldCall, reason: EndReason, gone: () => DispatchError): DispatchError;
  /** The refusal of a call whose arguments are kept out, or undefined. Costs nothing while none is. */
  keptOut(tenant: string, call: HeldCall): DispatchError | undefined;
}

interface Stops {
  count: number;
  /** Epoch ms of the first stop counted, or, once kept out, of the stop that kept it out. */
  since: number;
}

const keyOf = (tenant: string, call: HeldCall) => hash('sha256', `${tenant}\0${call.tool}\0${call.args}`, 'base64url');
const minutes = (ms: number) => `${Math.round(ms / 60_000)} minutes`;

export function createPoisonCalls(logger: Logger, now: () => number = Date.now): PoisonCalls {
  const stops = new Map<string, Stops>();
  let keptOutCount = 0;
  const live = (key: string): Stops | undefined => {
    const entry = stops.get(key);
    if (!entry || now() - entry.since < POISON_WINDOW_MS) return entry;
    stops.delete(key);
    if (entry.count >= STOPS_TO_KEEP_OUT) keptOutCount--;
    return undefined;
  };
  return {
    stopped(tenant, workerId, call, reason, gone) {
      if (reason.byWorker !== true && reason.hung !== true) return gone();
      const key = keyOf(tenant, call);
      const entry = live(key) ?? { count: 0, since: now() };
      stops.delete(key);
      stops.set(key, entry);
      if (stops.size > MAX_POISON_ENTRIES) {
        const [oldest, forgotten] = stops.entries().next().value as [string, Stops];
        stops.delete(oldest);
        if (forgotten.count >= STOPS_TO_KEEP_OUT) keptOutCount--;
      }
      if (++entry.count < STOPS_TO_KEEP_OUT) return gone();
      if (entry.count === STOPS_TO_KEEP_OUT) {
        keptOutCount++;
        entry.since = now();
        logger.warn('workers stopped under two calls with the same arguments: those arguments are sent to no worker here for 10 minutes', { tenant, tool: call.tool, worker: workerId, argsBytes: Buffer.byteLength(call.args) });
      }
      return new DispatchError(
        ErrorKind.UNEXPECTED,
        `worker "${workerId}" hosting "${call.tool}" ${reason.why} while running the call, the ${ordinal(entry.count)} worker to stop while running it (these arguments) within ${minutes(POISON_WINDOW_MS)}: the call may be what stops them, so it is sent to no worker for ${minutes(POISON_WINDOW_MS)}`,
        { phase: 'during', recoverable: false, suggestion: KEPT_OUT_SUGGESTION },
      );
    },
    keptOut(tenant, call) {
      if (keptOutCount === 0) return undefined;
      const entry = live(keyOf(tenant, call));
      if (!entry || entry.count < STOPS_TO_KEEP_OUT) return undefined;
      const left = Math.max(1, Math.ceil((POISON_WINDOW_MS - (now() - entry.since)) / 1000));
      return new DispatchError(
        ErrorKind.UNEXPECTED,
        `the call was not sent: ${entry.count} workers hosting "${call.tool}" stopped while running it (these arguments) within ${minutes(POISON_WINDOW_MS)}, so it is sent to no worker for ${left} more seconds; the tool was not executed`,
        // The refusal says nothing new of the tool's health: the stops counted already.
        { phase: 'before', recoverable: false, notTheTool: true, suggestion: KEPT_OUT_SUGGESTION },
      );
    },
  };
}

const ordinal = (n: number) => (n === 2 ? 'second' : n === 3 ? 'third' : `${n}th`);

const KEPT_OUT_SUGGESTION =
  'The tool stopped while running this call more than once: calling it again with the same arguments is refused for 10 minutes. Use other arguments or another tool, or tell the user; if the call changes anything, verify whether it took effect.';
