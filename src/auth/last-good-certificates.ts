import { X509Certificate } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log';
import { caProblem, identityProblem } from './certificate-check';

type CertificateProvider = grpc.experimental.CertificateProvider;
type IdentityUpdate = grpc.experimental.IdentityCertificateUpdate;
type CaUpdate = grpc.experimental.CaCertificateUpdate;

/** The certificates checked at start-up, served until good replacements arrive. */
export interface InitialCertificates {
  readonly identity: IdentityUpdate;
  readonly ca?: CaUpdate;
}

/** The files behind the updates, for messages. */
interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
  readonly ca?: string;
}

/** One kind of update (identity or CA) passed from a source provider to grpc-js's listeners. */
interface RelaySpec<T> {
  readonly label: string;
  readonly initial: T;
  /** The problem of an update the source could not read (it sends null). */
  readonly unreadable: string;
  problem(update: T): string | undefined;
  same(a: T, b: T): boolean;
  describe(update: T): Record<string, unknown>;
  subscribe(listener: (update: T | null) => void): void;
  unsubscribe(listener: (update: T | null) => void): void;
}

interface Relay<T> {
  add(listener: (update: T) => void): void;
  remove(listener: (update: T) => void): void;
}

function createRelay<T>(spec: RelaySpec<T>, logger: Logger): Relay<T> {
  let current = spec.initial;
  let refused: string | undefined;
  const listeners = new Set<(update: T) => void>();
  const fromSource = (update: T | null) => {
    const problem = update === null ? spec.unreadable : spec.problem(update);
    if (update === null || problem !== undefined) {
      if (problem !== refused) logger.warn(`${spec.label} refused; keeping the last good one`, { error: problem });
      refused = problem;
      return;
    }
    refused = undefined;
    if (spec.same(update, current)) return;
    current = update;
    logger.info(`${spec.label} reloaded`, spec.describe(update));
    for (const listener of listeners) listener(update);
  };
  return {
    add(listener) {
      listeners.add(listener);
      if (listeners.size === 1) spec.subscribe(fromSource);
      // grpc-js registers the server's watcher only after adding its listeners: a value sent now is lost.
      process.nextTick(listener, current);
    },
    remove(listener) {
      listeners.delete(listener);
      if (listeners.size === 0) spec.unsubscribe(fromSource);
    },
  };
}

function describeIdentity(update: IdentityUpdate, file: string): Record<string, unknown> {
  const leaf = new X509Certificate(update.certificate);
  return { file, subject: leaf.subject.replace(/\n/g, ', '), notAfter: leaf.validTo };
}

/**
 * A certificate provider that passes on what `source` reads only when it changed and is usable:
 * a certificate or CA bundle that does not parse, a key of another certificate or a file that
 * cannot be read is refused with one warning (until the problem changes), and the last good
 * certificates stay in force. Until the source's first read, the initial certificates are served.
 * Watching starts with the first listener and stops with the last (when the server closes).
 */
export function createLastGoodCertificateProvider(source: CertificateProvider, initial: InitialCertificates, files: CertificateFiles, logger: Logger): CertificateProvider {
  const identity = createRelay<IdentityUpdate>(
    {
      label: 'TLS certificate',
      initial: initial.identity,
      unreadable: `cannot read ${files.cert} or ${files.key}`,
      problem: (update) => identityProblem(update.certificate, update.privateKey, files),
      same: (a, b) => a.certificate.equals(b.certificate) && a.privateKey.equals(b.privateKey),
      describe: (update) => describeIdentity(update, files.cert),
      subscribe: (listener) => source.addIdentityCertificateListener(listener),
      unsubscribe: (listener) => source.removeIdentityCertificateListener(listener),
    },
    logger,
  );
  const caFile = files.ca;
  const ca =
    initial.ca && caFile !== undefined
      ? createRelay<CaUpdate>(
          {
            label: 'TLS client CA',
            initial: initial.ca,
            unreadable: `cannot read ${caFile}`,
            problem: (update) => caProblem(update.caCertificate, caFile),
            same: (a, b) => a.caCertificate.equals(b.caCertificate),
            describe: () => ({ file: caFile }),
            subscribe: (listener) => source.addCaCertificateListener(listener),
            unsubscribe: (listener) => source.removeCaCertificateListener(listener),
          },
          logger,
        )
      : undefined;
  return {
    addIdentityCertificateListener: (listener) => identity.add(listener),
    removeIdentityCertificateListener: (listener) => identity.remove(listener),
    addCaCertificateListener: (listener) => ca?.add(listener),
    removeCaCertificateListener: (listener) => ca?.remove(listener),
  };
}
