import { checkInteger } from './integer-option';
import { checkResponseRoom } from './response-room';

/** Bounds on what a client may send, what dispatch answers and what it keeps. Every field has a named default. */
export interface Limits {
  /** Largest gRPC message accepted, in bytes. @default 4 MiB */
  readonly maxMessageBytes: number;
  /**
   * Largest answer sent, in bytes: a turn's results are cut to fit it (read the rest with
   * ReadResult), and ReadResult pages, ParseToolCalls answers and ListApprovals, ListTools and
   * GetToolStats pages stay within it (not assignments to workers: see workerReceiveBytes).
   * A gRPC client refuses a message past its own receive limit, 4 MiB unless raised in every gRPC
   * implementation (grpc-go, grpc-java, grpc-js, the C core under Python, C++, Ruby), and the
   * turn's calls have run by then: raise it only with every client's receive limit. At most
   * maxMessageBytes, the largest message grpc-js sends here. @default 4 MiB, or maxMessageBytes
   * when that is lower
   */
  readonly maxResponseBytes: number;
  /**
   * What a worker whose hello does not say max_receive_message_bytes is assumed to receive, in
   * bytes: a larger assignment is refused INVALID_ARGUMENTS, not sent. Raise it for such workers
   * (older ones) whose channels were raised. At most maxMessageBytes. @default 4 MiB (gRPC's
   * default), or maxMessageBytes when that is lower
   */
  readonly workerReceiveBytes: number;
  /** Calls in one Dispatch. @default 128 */
  readonly maxCallsPerTurn: number;
  /** Size of one call's arguments text, in bytes. @default 1 MiB */
  readonly maxArgumentBytes: number;
  /** Nesting depth of one call's arguments. @default 64 */
  readonly maxArgumentDepth: number;
  /**
   * Size of a tool's input schema text, in bytes (DESIGN section 11). A compiled schema takes ~16-20
   * bytes of heap per byte (one of 256 KiB, 6,427 properties: 4 MiB and 2-3 s to compile). @default 256 KiB
   */
  readonly maxSchemaBytes: number;
  /**
   * Bytes of input schema text of the tools one tenant has registered (by RPC or a worker's hello)
   * on a replica, together; a registration past it is refused RESOURCE_EXHAUSTED, before any
   * compile, and so is a tool replicated from Redis. A tool replacing one of the same name counts
   * once; the config file's tools count for no tenant. ~40 MiB of compiled schemas per tenant at
   * most, and the number of tenants has no bound: a replica's heap must grow with its tenants (the
   * Helm chart's 512Mi pod has 332 MiB of old space). @default 2 MiB
   */
  readonly maxSchemaBytesPerTenant: number;
  /**
   * Bytes of input schema text compiled for one tenant's registrations (RPC, a worker's hello) on
   * a replica per minute: one whose new or changed schemas would pass what is left is refused
   * RESOURCE_EXHAUSTED before any compile (a spec registered again unchanged costs nothing).
   * Compiling is synchronous, ~3.5 ms of event loop per KB: a worker helloing with another 220 KB
   * schema on each reconnection stalled the replica 0.8-1.5 s each time. Another replica's tools
   * count here but are never refused. @default twice maxSchemaBytesPerTenant (4 MiB with its default)
   */
  readonly maxSchemaBytesCompiledPerMinutePerTenant: number;
  /** Largest tool output kept, in characters; longer output is cut before bounding, with a warning, and its result is `truncated`. @default 16 MiB */
  readonly maxToolOutputChars: number;
  /**
   * Bytes of HTTP tools' answers being read at once on a replica, all calls together: a call whose
   * next chunk would pass it waits for room (until its own deadline), unless it is the oldest
   * answer being read or its tenant holds less than an equal split of this limit among the tenants
   * reading (see maxAnswerBytesInFlightPerTenant) and the total stays within twice this limit: the
   * total stays under twice this limit plus the oldest answer. Each answer's text is read only up to maxToolOutputChars.
   * @default 64 MiB
   */
  readonly maxAnswerBytesInFlight: number;
  /**
   * Of maxAnswerBytesInFlight, the bytes of answers read at once for one tenant's calls (the calling
   * tenant's, the config file's tools included): a call whose next chunk would pass it waits for
   * room, but a tenant's oldest answer being read never waits for its share, and a tenant holding
   * less than an equal split of maxAnswerBytesInFlight (among the tenants reading) does not wait for
   * the total (up to twice it), so one tenant's slow or stalled answers do not hold up another
   * tenant's calls. At most
   * maxAnswerBytesInFlight. @default a quarter of maxAnswerBytesInFlight (16 MiB with its default)
   * with authentication configured; without it (every call is tenant `default`), maxAnswerBytesInFlight
   */
  readonly maxAnswerBytesInFlightPerTenant: number;
  /**
   * Dispatch RPCs (turns) running at once on a replica, all tenants together; one more is refused
   * RESOURCE_EXHAUSTED before any of its calls runs. @default 1024
   */
  readonly maxTurnsInFlight: number;
  /**
   * Dispatch RPCs running at once on a replica for one tenant (so one cannot take every place).
   * @default 512 with authentication configured; without it (every turn is tenant `default`),
   * maxTurnsInFlight
   */
  readonly maxTurnsPerTenant: number;
  /**
   * Characters of call arguments held by the turns running at once on a replica: a turn that would
   * take the sum past it is refused RESOURCE_EXHAUSTED before any of its calls runs (unless no
   * other turn runs), so that many large turns at once cannot exhaust the replica's memory, which
   * the turn counts alone allow (1,024 turns of 4 MiB). A character in flight costs ~2.2 bytes of
   * heap (the request, its parsed arguments and their copies), so the default fits a 256 MiB heap
   * (what node gives a 512Mi pod by itself; the chart gives 332 MiB): 128 Mi characters at once ran it
   * out of that heap. @default 32 Mi (33554432)
   */
  readonly maxArgumentCharsInFlight: number;
  /**
   * Of maxArgumentCharsInFlight, the characters held by one tenant's running turns: a turn that
   * would take its tenant past it is refused RESOURCE_EXHAUSTED before any of its calls runs
   * (unless none of the tenant's turns runs), so one tenant's large turns cannot take the room
   * every other tenant's turns need. At most maxArgumentCharsInFlight. @default three quarters of
   * maxArgumentCharsInFlight (24 Mi, 25165824, with its default) with authentication configured, so
   * a quarter always stays for the other tenants; without it (every turn is tenant `default`),
   * maxArgumentCharsInFlight
   */
  readonly maxArgumentCharsInFlightPerTenant: number;
  /**
   * Tool calls the turns running on a replica may run at once, all together: each turn holds its
   * peak from admission to its end (1 for a sequential turn; min(its calls, its max_concurrency,
   * 8 when 0) for a parallel one), and one that would take the sum past it is refused
   * RESOURCE_EXHAUSTED before any of its calls runs (unless no other turn runs). The turn count
   * alone let 170 parallel turns of 128 calls each run 21,760 HTTP calls at once, which ran the
   * Helm chart's 332 MiB heap out. An HTTP call in flight holds ~35 KB of live heap (its request,
   * socket, attempt and events; ~45 KB with the garbage between collections), so the default (what
   * 1,024 turns of the default concurrency 8 reach, so that nothing the turn count let in is
   * refused) holds ~280 MiB of live heap at its peak: most of the chart's 512Mi pod; give the pod
   * more or lower it where wide turns call slow HTTP tools. @default 8192
   */
  readonly maxCallsInFlight: number;
  /**
   * Of maxCallsInFlight, the calls one tenant's running turns may run at once: a turn that would
   * take its tenant past it is refused RESOURCE_EXHAUSTED before any of its calls runs (unless none
   * of the tenant's turns runs). At most maxCallsInFlight. @default half of maxCallsInFlight (4096
   * with its default) with authentication configured; without it (every turn is tenant `default`),
   * maxCallsInFlight
   */
  readonly maxCallsInFlightPerTenant: number;
  /**
   * Tools one tenant may have registered by RPC on a replica (RegisterTools refuses more,
   * RESOURCE_EXHAUSTED, before registering any); a tool replacing one of the same name does not
   * count twice, and the config file's tools count for no tenant. With replicas sharing Redis, each
   * replica checks its own view of the tenant's tools. @default 1000
   */
  readonly maxToolsPerTenant: number;
  /** Concurrent Subscribe streams per tenant. @default 64 */
  readonly maxSubscribersPerTenant: number;
  /** Events buffered per subscriber before the oldest are dropped. @default 1024 */
  readonly subscriberBuffer: number;
  /** Sessions the memory store keeps; past it idle ones go first, then the largest tenants' least recently used (MemoryStoreOptions.maxSessions). @default 10000 */
  readonly maxSessions: number;
  /** Characters of results' whole texts the memory store keeps for ReadResult across sessions, past which ReadResult answers RESULT_EVICTED; 0: its own default, 32 Mi scaled to the heap (MemoryStoreOptions.maxSpilledChars). @default 0 */
  readonly maxSpilledChars: number;
  /** Trajectory entries kept per session. @default 200 */
  readonly maxMemoryEntries: number;
  /** Operations kept in a session's loop window. @default 100 */
  readonly loopWindow: number;
  /** Time a store step may take before it counts as failed, in ms. @default 1000 */
  readonly storeTimeoutMs: number;
  /** Time an interactive approval may wait, in ms. @default 120000 */
  readonly approvalTimeoutMs: number;
  /**
   * How often the server pings each client connection (HTTP/2 PING), in ms; 0: never. With pings,
   * a client that vanished without closing (its host gone, a partition) is found and its streams
   * (Subscribe, Work) end, instead of lasting until the kernel gives up, ~15 minutes. A connection
   * that is closing (server shutdown, its age reached, the client closing) is not pinged, so the
   * calls still running on it finish (src/server/closing-pings.ts). @default 30000
   */
  readonly keepaliveTimeMs: number;
  /** With pings on, the time a client has to answer one before its connection is closed, in ms. @default 10000 */
  readonly keepaliveTimeoutMs: number;
  /**
   * Age at which a client connection is asked to go away (GOAWAY, ±10%), in ms; 0: never. Calls in
   * flight finish on it and new calls open a new connection, which a Kubernetes Service may send to
   * another replica, so clients spread over replicas added since; streams open on it (Subscribe,
   * Work) go on until they end. @default 0
   */
  readonly maxConnectionAgeMs: number;
}

/** The defaults of {@link Limits}. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxMessageBytes: 4 * 1024 * 1024,
  maxResponseBytes: 4 * 1024 * 1024,
  workerReceiveBytes: 4 * 1024 * 1024,
  maxCallsPerTurn: 128,
  maxTurnsInFlight: 1024,
  maxTurnsPerTenant: 512,
  maxArgumentCharsInFlight: 32 * 1024 * 1024,
  maxArgumentCharsInFlightPerTenant: 24 * 1024 * 1024,
  maxCallsInFlight: 8192,
  maxCallsInFlightPerTenant: 4096,
  maxArgumentBytes: 1024 * 1024,
  maxArgumentDepth: 64,
  maxSchemaBytes: 256 * 1024,
  maxSchemaBytesPerTenant: 2 * 1024 * 1024,
  maxSchemaBytesCompiledPerMinutePerTenant: 4 * 1024 * 1024,
  maxToolOutputChars: 16 * 1024 * 1024,
  maxAnswerBytesInFlight: 64 * 1024 * 1024,
  maxAnswerBytesInFlightPerTenant: 16 * 1024 * 1024,
  maxToolsPerTenant: 1000,
  maxSubscribersPerTenant: 64,
  subscriberBuffer: 1024,
  maxSessions: 10_000,
  maxSpilledChars: 0,
  maxMemoryEntries: 200,
  loopWindow: 100,
  storeTimeoutMs: 1000,
  approvalTimeoutMs: 120_000,
  keepaliveTimeMs: 30_000,
  keepaliveTimeoutMs: 10_000,
  maxConnectionAgeMs: 0,
});

/** Node runs a timer longer than this (2^31 - 1 ms, ~24.8 days) after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Largest values, where a larger one would break what the limit bounds, and why. */
const MAXIMUMS: Partial<Record<keyof Limits, { readonly max: number; readonly why: string }>> = {
  ...Object.fromEntries((['storeTimeoutMs', 'approvalTimeoutMs', 'keepaliveTimeMs', 'keepaliveTimeoutMs', 'maxConnectionAgeMs'] as const).map((key) => [key, { max: MAX_TIMER_MS, why: 'Node runs longer timers at once' }])),
  maxMessageBytes: { max: 2 ** 31 - 1, why: 'grpc-js takes a 32-bit message size' },
  maxToolOutputChars: { max: 2 ** 29 - 24, why: "V8's longest string" },
  loopWindow: { max: 10_000, why: 'each call reads its session\'s whole window' },
  maxArgumentDepth: { max: 1_000, why: 'arguments are validated recursively' },
};

/**
 * Per-tenant shares of a limit on all tenants together: left out, a share is that limit times
 * `times` divided by `divisor` (at least 1), so lowering the limit lowers its share, or the whole
 * limit for a single tenant; set, it must not pass it.
 */
const SHARES: Partial<Record<keyof Limits, { readonly of: keyof Limits; readonly times: number; readonly divisor: number }>> = {
  maxAnswerBytesInFlightPerTenant: { of: 'maxAnswerBytesInFlight', times: 1, divisor: 4 },
  maxArgumentCharsInFlightPerTenant: { of: 'maxArgumentCharsInFlight', times: 3, divisor: 4 },
  maxCallsInFlightPerTenant: { of: 'maxCallsInFlight', times: 1, divisor: 2 },
};

/** Limits that may not pass another (as set), and default to the lower of theirs and it. */
const AT_MOST: Partial<Record<keyof Limits, { readonly of: keyof Limits; readonly name: string; readonly why: string }>> = {
  maxResponseBytes: { of: 'maxMessageBytes', name: 'max_message_bytes', why: 'the largest message grpc-js sends' },
  workerReceiveBytes: { of: 'maxMessageBytes', name: 'max_message_bytes', why: 'the largest message grpc-js sends' },
};

/**
 * Limits that, when set, may not be below `min` (or below their AT_MOST ceiling, if that is lower):
 * a smaller value would be taken and make every answer useless rather than fail.
 */
const AT_LEAST: Partial<Record<keyof Limits, { readonly min: number; readonly why: string }>> = {
  // 1,024 bytes of an answer are kept for its framing; at 1,024 every result was cut to 0 characters
  // and ReadResult gave 1 code point a page (found in review).
  maxResponseBytes: { min: 16_384, why: "room for a turn's results besides the answer's framing, and ReadResult pages of thousands of characters" },
};

/** Limits whose default is another limit (as set) times `times`. */
const MULTIPLES: Partial<Record<keyof Limits, { readonly of: keyof Limits; readonly times: number }>> = {
  maxSchemaBytesCompiledPerMinutePerTenant: { of: 'maxSchemaBytesPerTenant', times: 2 },
};

/** Per-tenant limits with a fixed default that, for a single tenant, default to the whole limit named. */
const WHOLE_FOR_ONE: Partial<Record<keyof Limits, keyof Limits>> = { maxTurnsPerTenant: 'maxTurnsInFlight' };

/** Limits that may be 0: it turns pings and a connection's age off, and leaves the spill budget to the memory store's default. */
const ZERO_ALLOWED: ReadonlySet<keyof Limits> = new Set(['keepaliveTimeMs', 'maxConnectionAgeMs', 'maxSpilledChars']);

/** How {@link resolveLimits} fills the per-tenant shares left out. */
export interface ResolveLimitsOptions {
  /**
   * Only one caller tenant can exist (no authentication is configured: every call is tenant
   * `default`), so a share left out is its whole limit: a fraction would only take capacity from
   * the one tenant there is. @default false (the fractions, for tenants kept apart by auth)
   */
  readonly singleTenant?: boolean;
}

/** A limit's default apart from shares and ceilings: the whole limit for one tenant, a multiple of another, or its own. */
function plainDefault(key: keyof Limits, partial: Partial<Record<keyof Limits, unknown>>, options: ResolveLimitsOptions): number {
  const alone = options.singleTenant ? WHOLE_FOR_ONE[key] : undefined;
  if (alone) return checkInteger(`limits.${alone}`, partial[alone] ?? DEFAULT_LIMITS[alone]);
  const multiple = MULTIPLES[key];
  if (multiple) return Math.min(Number.MAX_SAFE_INTEGER, checkInteger(`limits.${multiple.of}`, partial[multiple.of] ?? DEFAULT_LIMITS[multiple.of]) * multiple.times);
  return DEFAULT_LIMITS[key];
}

/** Fills unset limits with their defaults and rejects values that are not positive integers (or 0, where ZERO_ALLOWED says what it means). */
export function resolveLimits(partial: Partial<Record<keyof Limits, unknown>> = {}, options: ResolveLimitsOptions = {}): Limits {
  const out: Record<string, number> = {};
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    if (partial[key] === null) throw new RangeError(`limits.${key} must be a number (leave it out for the default)`);
    const share = SHARES[key];
    const whole = share && checkInteger(`limits.${share.of}`, partial[share.of] ?? DEFAULT_LIMITS[share.of]);
    const ceiling = AT_MOST[key];
    const cap = ceiling && checkInteger(`limits.${ceiling.of}`, partial[ceiling.of] ?? DEFAULT_LIMITS[ceiling.of]);
    const fixed = cap !== undefined ? Math.min(DEFAULT_LIMITS[key], cap) : plainDefault(key, partial, options);
    const fallback = !share || whole === undefined ? fixed : options.singleTenant ? whole : Math.max(1, Math.floor((whole * share.times) / share.divisor));
    const value = checkInteger(`limits.${key}`, partial[key] ?? fallback, { min: ZERO_ALLOWED.has(key) ? 0 : 1 });
    const floor = AT_LEAST[key] && Math.min(AT_LEAST[key]!.min, cap ?? Infinity);
    if (floor !== undefined && partial[key] !== undefined && value < floor) throw new RangeError(`limits.${key} must be at least ${floor} (${AT_LEAST[key]!.why}), got ${value}`);
    if (ceiling && cap !== undefined && value > cap) throw new RangeError(`limits.${key} must be at most ${ceiling.name} (${cap}), ${ceiling.why}, got ${value}`);
    if (whole !== undefined && value > whole) throw new RangeError(`limits.${key} must be at most the limit on all tenants together (${whole}), got ${value}`);
    const maximum = MAXIMUMS[key];
    if (maximum && value > maximum.max) throw new RangeError(`limits.${key} must be at most ${maximum.max} (${maximum.why}), got ${value}`);
    out[key] = value;
  }
  for (const key of Object.keys(partial)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new RangeError(`limits.${key} is not a known limit`);
  }
  checkResponseRoom(out as unknown as Limits, partial);
  return Object.freeze(out) as unknown as Limits;
}
