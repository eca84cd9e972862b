import type { RE2 as RE2Class } from 're2-wasm';

let loaded: typeof import('re2-wasm') | undefined;

/**
 * re2-wasm's RE2, loaded at the first pattern rather than with the app: loading it compiles its
 * WebAssembly module (~850 KB) and makes its 16 MiB memory, ~38 ms of CPU, which a replica whose
 * schemas hold no `pattern` (the example tools') never needs. require, not import(): TypeScript
 * keeps import() as an ES import here (see cli/dispatchd.ts).
 */
export const re2 = (): typeof RE2Class => (loaded ??= require('re2-wasm') as typeof import('re2-wasm')).RE2;
