let loaded: typeof import('undici') | undefined;

/**
 * undici, loaded at the first HTTP call rather than with the app: its ~95 modules are ~10% of what
 * the app loads, and a dispatch with no HTTP tool never needs them.
 */
export const undici = (): typeof import('undici') => (loaded ??= require('undici') as typeof import('undici'));
