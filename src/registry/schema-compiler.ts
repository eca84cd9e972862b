import type { ValidateFunction } from 'ajv';
import { createCompileWorker, type WorkerCode } from './compile-worker';
import { leasePatterns, schemaPatternBound, type LeaseOptions } from './pattern-pool';
import { createSchemaCodegen, doesNotCompile, parseSchemaText } from './schema-codegen';
import { loadSchemaModule } from './schema-module';

export { CompilerBusyError, type WorkerCode } from './compile-worker';

/** Compiles tool input schemas: draft 2020-12, defaults applied, no remote references. */
export interface SchemaCompiler {
  /**
   * Compiles schema text for `owner` (a tenant; "" for the operator's tools, the default),
   * throwing an Error with a precise message when it cannot. Its patterns count for the owner
   * until `release` is called (the tool removed or replaced); `lease` names the releases of the
   * tools it replaces, and whether the owner's pattern bound applies. With `code` (from
   * {@link generate}), only loads it here; without, compiles on the event loop (0.4-4 s for
   * 256 KiB): for schemas of 4 KiB or less (1 KiB for an MCP server's tools), the config file's
   * tools at startup, and an MCP server's when the worker takes no more. `checkMistakes`: also
   * refuse a schema that would not do what it says (see createSchemaCodegen).
   */
  compile(schemaText: string, owner?: string, lease?: LeaseOptions, code?: WorkerCode, checkMistakes?: boolean): CompiledSchema;
  /**
   * Compiles schema text in the compiler's worker thread, for {@link compile} to load with the same
   * `owner` and `lease` (a schema with more distinct patterns than the owner could lease is refused
   * there): the event loop serves calls meanwhile. Resolves to its code or its compile error; rejects
   * ({@link CompilerBusyError}) when the worker takes no more now.
   */
  generate(schemaText: string, owner?: string, lease?: Pick<LeaseOptions, 'perTenantBound'>, checkMistakes?: boolean): Promise<WorkerCode>;
  /** Ends the worker thread (the app closing). */
  close(): Promise<void>;
}

/** A compiled schema, and what gives back its patterns. */
export interface CompiledSchema {
  readonly schema: Record<string, unknown>;
  readonly validate: ValidateFunction;
  readonly release: () => void;
  /** The `format`s it names that nothing checks (annotations), each with where it is: for a log line. */
  readonly unknownFormats: readonly string[];
}

/** How long one schema's compile in the worker may take: 256 KiB took 1-5 s on two busy cores, 30 s and more on a host loaded 7 times over. */
export const COMPILE_TIMEOUT_MS = 60_000;
/** Schemas waiting for the worker, past which registrations are refused (each is at most max_schema_bytes). */
export const MAX_QUEUED_COMPILES = 64;

/** Options of {@link createSchemaCompiler}. */
export interface SchemaCompilerOptions {
  /** @default COMPILE_TIMEOUT_MS */
  readonly timeoutMs?: number;
  /** @default MAX_QUEUED_COMPILES */
  readonly maxQueued?: number;
  /** How long the worker thread lives idle before it ends, giving its heap back. @default 30 s */
  readonly idleMs?: number;
}

/** Creates a compiler that refuses schemas larger than `maxSchemaBytes`. */
export function createSchemaCompiler(maxSchemaBytes: number, options: SchemaCompilerOptions = {}): SchemaCompiler {
  // Ajv is set up at the first compile on the event loop (small schemas, the config file's tools).
  let generateHere: ReturnType<typeof createSchemaCodegen> | undefined;
  const worker = createCompileWorker(maxSchemaBytes, { timeoutMs: options.timeoutMs ?? COMPILE_TIMEOUT_MS, maxQueued: options.maxQueued ?? MAX_QUEUED_COMPILES, idleMs: options.idleMs });
  return {
    compile(schemaText, owner = '', lease = {}, code, checkMistakes = false) {
      if (code !== undefined && 'error' in code) throw new Error(code.error);
      const made = code ?? (generateHere ??= createSchemaCodegen(maxSchemaBytes))(schemaText, schemaPatternBound(owner, lease), checkMistakes);
      // Cheap (2 ms for 256 KiB), and this thread's own objects: the code was made from the same text.
      const schema = parseSchemaText(schemaText, maxSchemaBytes);
      // Each pattern's RE2 is leased for the owner: the pool shares one RE2 per pattern in the
      // process, and bounds the patterns of a tenant and of the process.
      const patterns = leasePatterns(owner, lease);
      try {
        const { validate } = loadSchemaModule(made.module, (pattern, flags) => patterns.take(pattern, flags.includes('u') ? flags : `${flags}u`), code?.cachedData);
        return { schema, validate, release: patterns.commit(), unknownFormats: made.unknownFormats };
      } catch (error) {
        patterns.abort();
        throw new Error(doesNotCompile(error));
      }
    },
    generate: (schemaText, owner = '', lease = {}, checkMistakes = false) => worker.compile(schemaText, schemaPatternBound(owner, lease), checkMistakes),
    close: () => worker.close(),
  };
}
