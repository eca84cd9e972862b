import { randomUUID } from 'node:crypto';
import type { SessionScope, StoredResult } from '../../src/store';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const fresh = (tenant = `t-${randomUUID()}`): SessionScope => ({ tenant, sessionId: `s-${randomUUID()}` });
export const OP = 'send_email\u0000{"to":"a@example.com"}';

export const stored = (output: string): StoredResult => ({
  output,
  isError: false,
  resolvedToolName: 'send_email',
  truncated: false,
  resultHandle: '',
  durationMs: 12,
});
