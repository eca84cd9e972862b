import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

type RequestId = string | number;

/**
 * Tells a call over Streamable HTTP when its request reached the server: the POST carrying it was
 * handed to a connected socket (undici's `onConnect`, as an HTTP tool's request: http-sent.ts).
 * Until then nothing was sent, so a call that times out or fails meanwhile (a connect that hangs,
 * the server's host silent) did not run: a side-effecting call's claim is given back rather than
 * its outcome kept unknown for its record's TTL, up to an hour.
 *
 * The SDK numbers its requests itself, so the hook goes with the request the call sends: armed
 * around `callTool` (Protocol.request hands its request to `transport.send` before it returns),
 * taken by the transport's send (`wrap`), then by the fetch of its POST (`take`, by the request id
 * the body carries). One per transport: a new client numbers from 0 again.
 */
export class SentHooks {
  private armed: (() => void) | undefined;
  private readonly byId = new Map<RequestId, () => void>();

  /**
   * Runs `start`, which sends one request synchronously; `onSent` is told once that request reaches
   * the server. A `start` that sent no request meanwhile (an SDK that came to send later) has
   * `onSent` told at once: taken as sent, as every call was before, never as not sent when it was.
   */
  arm<T>(onSent: () => void, start: () => T): T {
    this.armed = onSent;
    try {
      return start();
    } finally {
      if (this.armed === onSent) {
        this.armed = undefined;
        onSent();
      }
    }
  }

  /** Wraps `transport.send`: the request sent while a hook is armed takes it until its send settles. */
  wrap(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const hook = this.armed;
      if (hook === undefined || !('method' in message) || !('id' in message)) return send(message, options);
      this.armed = undefined;
      const id = message.id;
      this.byId.set(id, hook);
      const sent = send(message, options);
      const forget = () => {
        if (this.byId.get(id) === hook) this.byId.delete(id);
      };
      sent.then(forget, forget);
      return sent;
    };
  }

  /** The hook of the request `id`, once: its POST is about to be fetched. */
  take(id: RequestId): (() => void) | undefined {
    const hook = this.byId.get(id);
    this.byId.delete(id);
    return hook;
  }

  /** Hooks held (requests being sent): none once their sends settle. */
  size(): number {
    return this.byId.size;
  }
}
