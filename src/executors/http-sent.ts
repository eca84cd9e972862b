import { DecoratorHandler, type Dispatcher } from 'undici';

/** undici's DecoratorHandler with the method overridden here (its .d.ts declares the constructor alone). */
const Decorator = DecoratorHandler as unknown as new (handler: Dispatcher.DispatchHandlers) => {
  onConnect(abort: (error?: Error) => void): void;
};

/**
 * A request's handler that calls `onSent` when undici hands the request to a connected socket:
 * undici calls `onConnect` just before it writes the request there, and not at all when the
 * connection could not be made (DNS, refused, a connect that hangs until the timeout). A request
 * aborted inside `onConnect` (its fetch gave up while it waited for the socket) is not written.
 */
class SentHandler extends Decorator {
  constructor(
    handler: Dispatcher.DispatchHandlers,
    private readonly onSent: () => void,
  ) {
    super(handler);
  }

  override onConnect(abort: (error?: Error) => void): void {
    let aborted = false;
    super.onConnect((error) => {
      aborted = true;
      abort(error);
    });
    if (!aborted) this.onSent();
  }
}

/**
 * `dispatcher` for one request, calling `onSent` once undici has handed that request to a connected
 * socket: until then nothing reached the tool, so a failure or a timeout cannot have run it.
 */
export function reportingSent(dispatcher: Dispatcher, onSent: () => void): Dispatcher {
  return dispatcher.compose((dispatch) => (options, handler) => dispatch(options, new SentHandler(handler, onSent)));
}
