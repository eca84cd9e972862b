import { randomBytes } from 'node:crypto';

/** This process's part of every id newId makes: random, so no two replicas share it. */
const PROCESS_PREFIX = randomBytes(9).toString('base64url');
let made = 0;

/**
 * An id unique across replicas and over the process's life (its random prefix, then a count in
 * base 36): a claim's owner (one per attempt), a call's budget token (one per call).
 */
export const newId = (): string => `${PROCESS_PREFIX}${(++made).toString(36)}`;
