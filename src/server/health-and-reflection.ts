import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { terminalText } from '../events/terminal-text';
import { shortened } from '../pipeline/bound-result';
import { addService } from './grpc-adapter';
import { addReflectionServices } from './reflection-services';
import { indexEnumValues, reflectedFiles } from './reflected-files';

/** The services whose health is reported. */
export const HEALTH_SERVICES = ['', 'dispatch.v1.DispatchService'] as const;

/**
 * Health Watch streams open at once on a replica: they take no credentials and stay open as long as
 * the client likes (a client-side health checker holds one per channel). Past it, a Watch is
 * refused RESOURCE_EXHAUSTED; Check is unbounded and holds nothing.
 */
export const MAX_HEALTH_WATCHES = 2_048;
/** Server reflection streams open at once on a replica (no credentials either; grpcurl opens one per command). */
export const MAX_REFLECTION_STREAMS = 64;
/**
 * Answers waiting on one reflection stream for a client that does not read them: @grpc/reflection
 * writes each answer without waiting, and each echoes its request, so a client that asked and
 * never read made the server keep everything it sent (requests of 1 MB for 3 s: 80 MB). Past
 * it, the stream ends RESOURCE_EXHAUSTED. Reflection clients ask one thing at a time; a client may
 * send this many before reading. With requests of at most MAX_REFLECTION_REQUEST_CHARS, a stream
 * keeps ~2 MB at most.
 */
export const MAX_QUEUED_REFLECTION_ANSWERS = 256;
/** Characters of one reflection request (a symbol or file name, a host): a longer one ends its stream INVALID_ARGUMENT. */
export const MAX_REFLECTION_REQUEST_CHARS = 4_096;

const reported = (service: unknown): boolean => (HEALTH_SERVICES as readonly unknown[]).includes(service);

/** The health service's state, as the server changes it. */
export interface HealthControl {
  serving(up: boolean): void;
  /**
   * The drain has begun: every service turns NOT_SERVING, and each open `Watch` stream is sent
   * that status and then ended (OK). grpc-health-check never ends a Watch itself, so one open
   * stream (a client-side balancer's, a sidecar's) held the draining server until its grace ended.
   * Each open reflection stream is ended (OK) too.
   */
  stop(): void;
}

/** Adds grpc.health.v1 (NOT_SERVING until `serving(true)`) and server reflection. */
export function addHealthAndReflection(server: grpc.Server): HealthControl {
  const health = new HealthImplementation(Object.fromEntries(HEALTH_SERVICES.map((s) => [s, 'NOT_SERVING' as const])));
  // The package's own handlers, wrapped so that the open Watch streams are known (and can be ended).
  let handlers: grpc.UntypedServiceImplementation | undefined;
  health.addToServer({ addService: (_definition: unknown, implementation: grpc.UntypedServiceImplementation) => (handlers = implementation) } as unknown as grpc.Server);
  const watches = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  let stopped = false;
  const watch = handlers!.watch as grpc.handleServerStreamingCall<unknown, unknown>;
  const check = handlers!.check as grpc.handleUnaryCall<unknown, unknown>;
  // Health needs no credentials and its request names any service, up to max_message_bytes: the
  // package keyed its Watch listeners by that name for good (40 Watches of 1 MiB names kept 42 MB)
  // and its Check echoed the name whole in grpc-message (100 KB never reached the client, which
  // waited for its deadline). The services reported are fixed, so others are answered here.
  server.addService(healthService, {
    ...handlers!,
    check(call: grpc.ServerUnaryCall<{ service?: unknown }, unknown>, callback: grpc.sendUnaryData<unknown>) {
      if (reported(call.request.service)) return void check(call, callback);
      const name = typeof call.request.service === 'string' ? call.request.service : '';
      callback({ code: grpc.status.NOT_FOUND, details: `Health status unknown for service "${terminalText(shortened(name, 200))}"` });
    },
    watch(call: grpc.ServerWritableStream<{ service?: unknown }, unknown>) {
      if (!stopped && watches.size >= MAX_HEALTH_WATCHES) {
        return void call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: `this dispatch replica has its limit of ${MAX_HEALTH_WATCHES} health Watch streams open; use Check, or Watch again later` });
      }
      // An unknown service stays SERVICE_UNKNOWN (the stream open, as the health protocol has it).
      if (reported(call.request.service)) watch(call);
      else call.write({ status: 'SERVICE_UNKNOWN' });
      if (stopped) return void call.end();
      watches.add(call);
      call.on('cancelled', () => watches.delete(call));
    },
  });
  // Reflection streams open, ended (OK) by stop() as Watches are: a client may hold one open.
  const reflections = new Set<ReflectionStream>();
  const reflection = new ReflectionService(reflectedFiles());
  indexEnumValues(reflection);
  addReflectionServices(reflection, (definition, implementation) => addService(server, definition, boundedReflection(implementation, reflections)));
  const setAll = (up: boolean) => {
    for (const service of HEALTH_SERVICES) health.setStatus(service, up ? 'SERVING' : 'NOT_SERVING');
  };
  return {
    serving: setAll,
    stop() {
      stopped = true;
      setAll(false);
      for (const call of watches) call.end();
      watches.clear();
      for (const stream of reflections) stream.end();
      reflections.clear();
    },
  };
}

type ReflectionStream = grpc.ServerDuplexStream<unknown, { originalRequest?: unknown }>;

/**
 * @grpc/reflection's handlers, their open streams counted (in `streams`), a stream ended when its
 * client leaves MAX_QUEUED_REFLECTION_ANSWERS unread or sends a request longer than any name.
 */
function boundedReflection(implementation: grpc.UntypedServiceImplementation, streams: Set<ReflectionStream>): grpc.UntypedServiceImplementation {
  return Object.fromEntries(
    Object.entries(implementation).map(([name, handler]) => [
      name,
      (stream: ReflectionStream) => {
        if (streams.size >= MAX_REFLECTION_STREAMS) {
          return void stream.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: `this dispatch replica has its limit of ${MAX_REFLECTION_STREAMS} reflection streams open; try again later` });
        }
        streams.add(stream);
        const close = () => void streams.delete(stream);
        for (const event of ['finish', 'close', 'cancelled']) stream.once(event, close);
        // The library calls write for each request and ignores what it returns: refused here when
        // the client has left answers unread or sent a request no reflection client sends.
        const write = stream.write.bind(stream) as (answer: unknown) => boolean;
        let ended = false;
        stream.write = ((answer: { originalRequest?: unknown }) => {
          // Ended here, or by stop() (the drain): later requests are not answered.
          if (ended || stream.writableEnded) return false;
          const refusal =
            stream.writableLength >= MAX_QUEUED_REFLECTION_ANSWERS
              ? { code: grpc.status.RESOURCE_EXHAUSTED, details: `${MAX_QUEUED_REFLECTION_ANSWERS} reflection answers are waiting to be read on this stream: read them before asking more` }
              : requestChars(answer.originalRequest) > MAX_REFLECTION_REQUEST_CHARS
                ? { code: grpc.status.INVALID_ARGUMENT, details: `a reflection request holds at most ${MAX_REFLECTION_REQUEST_CHARS} characters of names` }
                : undefined;
          if (!refusal) return write(answer);
          ended = true;
          stream.emit('error', refusal);
          return false;
        }) as ReflectionStream['write'];
        (handler as (stream: ReflectionStream) => void)(stream);
      },
    ]),
  );
}

/** Characters of the strings in a decoded reflection request (its fields are strings, one level down at most). */
function requestChars(request: unknown): number {
  let chars = 0;
  for (const value of Object.values(request ?? {})) {
    if (typeof value === 'string') chars += value.length;
    else if (value && typeof value === 'object') chars += requestChars(value);
  }
  return chars;
}
