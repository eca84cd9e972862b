import * as grpc from '@grpc/grpc-js';
import type { Event, SubscribeRequest } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../log';
import { CREDENTIAL_RECHECK_MS, invalidArgument, recheckCredentials, RpcError, toServiceError, type Authenticator } from '../server';
import type { EventBus, Subscription } from './event-bus';
import { filterOf } from './event-filter';

/** What the Subscribe handler needs. */
export interface SubscribeHandlerOptions {
  readonly bus: EventBus;
  /** Late-bound: the authenticator is known once every plugin is built. */
  readonly authenticate: () => Authenticator;
  readonly logger: Logger;
}

/**
 * Subscribe: streams the events of the caller's tenant that pass its filter. Each subscriber
 * reads from its own bounded buffer; the stream is written only while grpc accepts more
 * (a `false` from write() waits for 'drain'), so a reader that stops only loses its oldest events.
 */
export function subscribeHandler(options: SubscribeHandlerOptions): grpc.handleServerStreamingCall<SubscribeRequest, Event> {
  const { bus, logger } = options;
  return (call) => {
    const fail = (error: unknown) => call.emit('error', toServiceError(error, logger));
    let tenant: string;
    try {
      tenant = options.authenticate()(call, 'subscribe').tenant;
    } catch (error) {
      return fail(error);
    }
    const filter = filterOf(call.request);
    if (typeof filter === 'string') return fail(invalidArgument(filter.startsWith('session_id') ? 'session_id' : filter.includes(' tools ') ? 'tools' : 'kinds', filter));

    let finished = false;
    let scheduled = false;
    let subscription: Subscription | undefined;
    const pump = () => {
      scheduled = false;
      if (finished || !subscription) return;
      for (let event = subscription.next(); event !== undefined; event = subscription.next()) {
        if (!call.write(event)) {
          call.once('drain', pump);
          return;
        }
      }
    };
    const finish = (endStream: boolean) => {
      if (finished) return;
      finished = true;
      clearInterval(recheck);
      subscription?.close();
      if (endStream) call.end();
    };
    // The credentials are checked again now and then: a token revoked (the tokens file changed)
    // ends the streams it opened, which would otherwise go on for as long as their connection;
    // so does a token the file gave to another tenant (its holder would see the old tenant's events).
    const recheck = setInterval(() => {
      try {
        recheckCredentials(options.authenticate(), call, 'subscribe', tenant);
      } catch (error) {
        finish(false);
        fail(error);
      }
    }, CREDENTIAL_RECHECK_MS);
    recheck.unref();
    subscription = bus.subscribe(tenant, filter, {
      wake: () => {
        if (scheduled) return;
        scheduled = true;
        setImmediate(pump);
      },
      // The bus closed (shutdown): what is buffered goes out before the stream ends, past
      // backpressure too (at most the subscriber's bounded buffer).
      closed: () => {
        if (!finished && subscription) for (let event = subscription.next(); event !== undefined; event = subscription.next()) call.write(event);
        finish(true);
      },
    });
    if (!subscription) {
      clearInterval(recheck);
      return fail(new RpcError(grpc.status.RESOURCE_EXHAUSTED, `tenant "${tenant}" already has the maximum number of event subscribers on this server; close one first`, 'SUBSCRIBER_LIMIT', { tenant }));
    }
    call.on('cancelled', () => finish(false));
    call.on('close', () => finish(false));
    call.on('error', () => finish(false));
    call.sendMetadata(new grpc.Metadata());
  };
}
