import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { DestinationPolicy } from './destination-policy';
import type { Logger } from '../log';
import type { ResolvedTool } from './resolved-tool';

/**
 * Why a registration was refused: a bad spec, a name that exists without `replace`, or a limit.
 * A `limit` with `retryAfterMs` is transient (the compiler busy, the compile budget spent: the
 * same registration succeeds after that wait); one without is lasting (the tenant's tools or
 * schema bytes), mended only by registering less.
 */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly code: 'invalid' | 'exists' | 'limit' | 'denied',
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A change to the registry, so that a shared store can carry it to other replicas. */
export type RegistryChange =
  | { readonly type: 'register'; readonly tenant: string; readonly specs: readonly ToolSpec[] }
  | { readonly type: 'remove'; readonly tenant: string; readonly name: string };

/**
 * Told of a change to the registry. One that shares changes (writes them to Redis) returns the
 * promise of that write, which {@link ToolRegistry.removeShared} awaits; where nobody waits, each
 * listener reports its own failures.
 */
export type ChangeListener = (change: RegistryChange) => void | Promise<void>;

/** Told once a removed tool is gone here, whichever replica removed it (see {@link ToolRegistry.onRemoved}). */
export type RemovedListener = (tenant: string, name: string) => void;

/**
 * The tools this server can dispatch, per tenant. The operator's tools (tenant "": the config
 * file's and those imported from MCP servers) are seen by every tenant and win over a tenant's tool
 * of the same name, which no tenant can register but one may hold from before the name became the
 * operator's (an MCP server listing it later).
 */
export interface ToolRegistry {
  /**
   * Validates and compiles every spec first, then registers all or none. With `maxTools`, refuses
   * (code `limit`) before anything else when the tenant would own more tools than that; a spec
   * replacing one of its tools does not count again. A tenant's spec named as an operator's tool
   * is refused (code `exists`), with `replace` too. With `replace`, a spec equal to the tool held by
   * its name (a worker's hello on each reconnection) is checked and that tool kept, not compiled again.
   * Compiles on the event loop (0.4-4 s per 256 KiB of schema): for the config file's tools at
   * startup (and an MCP server's when the worker takes no more); a tenant's registrations and an
   * MCP server's use {@link registerAsync}.
   */
  register(specs: readonly ToolSpec[], options: { tenant: string; replace?: boolean; maxTools?: number }): ResolvedTool[];
  /** The operator's tool of that name, else the tenant's own. */
  lookup(tenant: string, name: string): ResolvedTool | undefined;
  /**
   * What the tenant can call (the operator's tools, then its own not named as one), by name; with
   * `own`, the tools the tenant itself holds, those an operator's tool hides too (EraseTenant).
   */
  list(tenant: string, own?: boolean): ResolvedTool[];
  /** Removes a tool here; listeners are told after, and nobody waits for what they share. */
  remove(tenant: string, name: string): boolean;
  /**
   * RemoveTool: tells the listeners first and waits for every one, then removes the tool here, so
   * that the removal is shared (in Redis, announced) when this resolves. When a listener fails,
   * rejects with its error and leaves the tool registered here: the removal can be asked again.
   * A tool registered again while the listeners worked (a worker's hello) is kept.
   */
  removeShared(tenant: string, name: string): Promise<boolean>;
  /** Called on every local change (before it, for {@link removeShared}); a replicated registry listens here. */
  onChange(listener: ChangeListener): void;
  /**
   * Called once a removal made here has happened: after {@link remove}, and after
   * {@link removeShared} once shared (the tool dropped, or one registered again meanwhile kept), never
   * for one that failed; and for a removal from another replica once {@link applyRemote} has dropped
   * the tool here. A listener's throw is logged.
   */
  onRemoved(listener: RemovedListener): void;
  /**
   * Applies a change made on another replica, without notifying listeners. A change of the
   * operator's tools (tenant "") is ignored: each replica has its own (DESIGN section 11). The
   * tenant's totals (tools, schema bytes, patterns) are not checked: the registering replica
   * decided, so every replica holds the same tools. A tenant left over its schema bytes or patterns
   * is logged (warn, once until it is under again); a registration here that leaves it over is
   * refused. The process's pattern bound still refuses a tool here (thrown: this replica lacks it).
   * Its compiled schemas count against the tenant's compile budget here, never refused by it.
   * Compiles on the event loop: replicas use {@link applyRemoteAsync}.
   */
  applyRemote(change: RegistryChange): void;
  /**
   * {@link register}, its schemas compiled in the compiler's worker thread, so that the event loop
   * serves calls meanwhile (a 256 KiB schema held it 1-4 s). A tenant's registrations and changes
   * from other replicas ({@link applyRemoteAsync}) are applied one after the other, in the order
   * asked: a later one never overtaken by an earlier, slower one. Every refusal of `register` is
   * made before anything is compiled (the budget too), and all are made again when the compiled
   * tools are installed, at once, as by `register` (a tool removed meanwhile may need compiling
   * there). Refused `limit` when the compiler has too many schemas waiting.
   */
  registerAsync(specs: readonly ToolSpec[], options: { tenant: string; replace?: boolean; maxTools?: number } & AsyncCompileOptions): Promise<ResolvedTool[]>;
  /**
   * {@link applyRemote}, compiled in the worker thread, in order with the tenant's other changes
   * (see {@link registerAsync}). Changes given together (of one tenant: a removal and the
   * registration that followed it) are applied in one go once compiled, each one refused or not
   * (rejects with the first refusal).
   */
  applyRemoteAsync(changes: RegistryChange | readonly RegistryChange[]): Promise<void>;
  /** Ends the compiler's worker thread; registrations waiting for it are refused. */
  close(): Promise<void>;
}

/** How {@link ToolRegistry.registerAsync} compiles, beyond what it registers. */
export interface AsyncCompileOptions {
  /**
   * Schemas of at most this many bytes compile on the event loop at install (a worker's tools are
   * then callable as soon as its hello is read); larger ones in the worker thread. An MCP server's
   * import passes less: its many small schemas, compiled together, held the loop for seconds.
   * @default 4 KiB
   */
  readonly compileHereUpTo?: number;
  /**
   * Asked once the schemas are compiled, before anything is installed: when false (an MCP server's
   * list superseded by a newer one), nothing is registered and the promise resolves to [].
   */
  readonly wanted?: () => boolean;
}

/** Options of {@link createToolRegistry}. */
export interface ToolRegistryOptions {
  /**
   * Where the HTTP tools of tenants may point; a URL whose literal address or host it denies is
   * refused at registration (the config file's tools, tenant "", are not checked).
   * @default the built-in rules alone
   */
  readonly httpPolicy?: DestinationPolicy;
  /**
   * Whether a tenant's tool may declare `skip_redaction` (the config file's tools, tenant "", always
   * may); refused PERMISSION_DENIED otherwise. @default false
   */
  readonly allowTenantSkipRedaction?: boolean;
  /**
   * Whether a tenant may register a tool whose executor is one of the operator's MCP servers
   * (`mcp: { server, tool }`); refused PERMISSION_DENIED otherwise: under a name of its own, a
   * tenant's tool could call the server's tool with another effect, past the policies that match
   * the imported tool's name. @default false
   */
  readonly allowTenantMcp?: boolean;
  /**
   * Bytes of schema text a tenant's tools may hold together (registered here or by a worker's
   * hello); refused `limit` before any compile. Not checked on another replica's tools (see
   * {@link ToolRegistry.applyRemote}). @default no bound
   */
  readonly maxSchemaBytesPerTenant?: number;
  /**
   * Bytes of input schema a tenant may have compiled here per minute (see compile-budget.ts): a
   * registration here (RPC, a worker's hello) whose new or changed schemas would pass what is left
   * is refused `limit` before any compile; a spec held as it is costs nothing. Another replica's
   * tools are applied whatever is left, and counted. @default no bound
   */
  readonly maxSchemaBytesCompiledPerMinute?: number;
  /** Where a tenant left over its totals by another replica's tools is reported. @default createLogger() */
  readonly logger?: Logger;
}
