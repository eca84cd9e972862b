export { createAuthenticator } from './create-authenticator';
export type { AuthenticatorOptions } from './create-authenticator';
export { certificateTenant } from './client-certificate';
export { createTokenTable, sha256Hex } from './token-table';
export type { TokenOrigin, TokenTable } from './token-table';
export { readTokensFile, watchTokensFile } from './tokens-file';
export type { WatchOptions } from './tokens-file';
export { DEFAULT_TLS_REFRESH_INTERVAL_MS, MAX_TLS_REFRESH_INTERVAL_MS, resolveTlsRefreshIntervalMs, serverCredentials } from './tls-credentials';
export type { TlsFiles } from './tls-credentials';
