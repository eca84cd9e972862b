let loaded: typeof import('undici') | undefined;

/**
 * undici, loaded at its first use rather than with the app: its ~95 modules are ~10% of what the
 * app loads, and a dispatch with no HTTP tool never needs them. The HTTP executor's prepare uses it
 * first, when an HTTP tool is registered, so that no call waits for the load.
 */
export const undici = (): typeof import('undici') => (loaded ??= require('undici') as typeof import('undici'));
