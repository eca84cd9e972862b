import { create } from '@bufbuild/protobuf';
import { EventKind, EventSchema } from '../../gen/dispatch/v1/dispatch_pb';
import type { EventBus, Subscription } from '../../src/events';
import { until } from '../helpers/until';

/** Events numbered 0, 1, ... published on `from` for tenant acme, and what a subscriber of `to` saw of them. */
export interface RelayTraffic {
  /** Publishes the next event on `from`. */
  send(): void;
  /** Reads what reached the subscriber of `to`. */
  drain(): void;
  /** Events sent so far. */
  readonly sent: number;
  /** The numbers of the events received, in order. */
  readonly received: readonly number[];
  /** The sum of the received events' `dropped`. */
  readonly dropped: number;
  /** Sends and reads until an event numbered `from` or later was received; gives the first received. */
  untilReceived(from: number, what: string, ms: number): Promise<number>;
  /**
   * Sends 5 more, then checks that every event since `first` was received or counted dropped
   * (and some were dropped), in order, none twice.
   */
  expectAllAccounted(first: number): Promise<void>;
  close(): void;
}

export function relayTraffic(from: EventBus, to: EventBus): RelayTraffic {
  const hooks = { wake: () => undefined, closed: () => undefined };
  const sub: Subscription = to.subscribe('acme', { sessionId: '' }, hooks)!;
  const received: number[] = [];
  let dropped = 0;
  let sent = 0;
  const traffic: RelayTraffic = {
    send: () => from.publish('acme', create(EventSchema, { kind: EventKind.TOOL_PRE, sessionId: 's', tool: 'echo', name: String(sent++) })),
    drain() {
      for (let e = sub.next(); e; e = sub.next()) {
        received.push(Number(e.name));
        dropped += Number(e.dropped);
      }
    },
    get sent() {
      return sent;
    },
    received,
    get dropped() {
      return dropped;
    },
    async untilReceived(from, what, ms) {
      await until(() => {
        traffic.send();
        traffic.drain();
        return received.some((n) => n >= from) ? true : undefined;
      }, what, ms);
      return received[0]!;
    },
    async expectAllAccounted(first) {
      for (let n = 0; n < 5; n++) traffic.send();
      await until(() => {
        traffic.drain();
        return received.length + dropped === sent - first ? true : undefined;
      }, 'every event received or counted dropped', 10_000);
      await new Promise((r) => setTimeout(r, 300));
      traffic.drain();
      expect(dropped).toBeGreaterThan(0);
      expect(received.length + dropped).toBe(sent - first);
      expect(received).toEqual([...received].sort((a, b) => a - b));
      expect(new Set(received).size).toBe(received.length);
    },
    close: () => sub.close(),
  };
  return traffic;
}
