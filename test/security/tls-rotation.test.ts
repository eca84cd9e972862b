// The listener's certificate, key and client CA re-read from disk while it serves (a cert-manager
// renewal landing in a mounted Secret): new handshakes get the new files, connections already open
// keep working, and an unusable file mid-rotation leaves the last good certificate serving.
import * as grpc from '@grpc/grpc-js';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { ToolRegistryService } from '../../gen/dispatch/v1/registry_pb';
import { createServiceClient } from '../../src/client';
import { createLogger } from '../../src/log';
import { eventually } from '../workers/worker-harness';
import { startAuthApp, type AuthApp } from './support/auth-app';
import { createTestPki, type TestPki } from './support/certificates';
import { createSecretMount, type SecretMount } from './support/secret-mount';

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';
const REFRESH_MS = 50;

let pkiA: TestPki;
let pkiB: TestPki;
let mount: SecretMount;
beforeAll(() => {
  pkiA = createTestPki('rotation CA A');
  pkiB = createTestPki('rotation CA B');
});
afterAll(() => (pkiA.remove(), pkiB.remove()));
beforeEach(() => {
  mount = createSecretMount('dispatch-tls-');
});
afterEach(() => mount.remove());

type Pair = { cert: string; key: string };
const serverPair = (pki: TestPki): Pair => ({ cert: pki.serverCert, key: pki.serverKey });

/** Client credentials trusting `ca`, with a client certificate when given. */
const trusting = (ca: string, client?: Pair) => grpc.credentials.createSsl(readFileSync(ca), client ? readFileSync(client.key) : null, client ? readFileSync(client.cert) : null);

/** A kubernetes.io/tls Secret's files: the server pair, and `ca.crt` when given. */
const secretOf = (server: Pair, ca?: string): Record<string, Buffer> => ({
  'tls.crt': readFileSync(server.cert),
  'tls.key': readFileSync(server.key),
  ...(ca === undefined ? {} : { 'ca.crt': readFileSync(ca) }),
});

/**
 * ListTools over a new connection (a channel of its own, not sharing grpc-js's subchannel pool):
 * the tool names, or the status code when the handshake or the call fails.
 */
async function overNewConnection(app: AuthApp, credentials: grpc.ChannelCredentials): Promise<string[] | grpc.status> {
  const registry = createServiceClient(ToolRegistryService, `localhost:${app.port}`, credentials, { 'grpc.use_local_subchannel_pool': 1 });
  try {
    return (await registry.listTools({}, { deadlineMs: 2000 })).tools.map((t) => t.name);
  } catch (error) {
    return (error as grpc.ServiceError).code;
  } finally {
    registry.close();
  }
}

/** Replaces one file in one rename, so that a refresh reads it whole (the files together are not). */
function replaceFile(file: string, content: Buffer): void {
  writeFileSync(`${file}.tmp`, content);
  renameSync(`${file}.tmp`, file);
}

/** A logger whose lines the test reads, and the count of lines holding `text`. */
function capturedLog() {
  const lines: string[] = [];
  return { logger: createLogger('info', (line) => lines.push(line) > 0), count: (text: string) => lines.filter((l) => l.includes(text)).length };
}

test('a Secret rotated to a certificate of another CA: new handshakes get it after a refresh, an open connection keeps working', async () => {
  mount.publish(secretOf(serverPair(pkiA)));
  const log = capturedLog();
  const app = await startAuthApp(TOOLS, {
    daemon: { tls: { cert: mount.path('tls.crt'), key: mount.path('tls.key'), refreshIntervalMs: REFRESH_MS } },
    credentials: trusting(pkiA.ca),
    logger: log.logger,
  });
  try {
    expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo']);
    expect(await overNewConnection(app, trusting(pkiB.ca))).toBe(grpc.status.UNAVAILABLE);

    mount.publish(secretOf(serverPair(pkiB)));
    await eventually(async () => Array.isArray(await overNewConnection(app, trusting(pkiB.ca))), 5_000, 'the certificate of CA B served');

    expect(await overNewConnection(app, trusting(pkiA.ca))).toBe(grpc.status.UNAVAILABLE);
    // app.registry could not reconnect trusting only CA A: this is the connection opened before.
    expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo']);
    expect(log.count('"TLS certificate reloaded"')).toBe(1);
    expect(log.count('refused')).toBe(0);
  } finally {
    await app.close();
  }
});

test('mutual TLS with a rotated client CA: certificates of the new CA get in and name their tenant, those of the old one no longer connect', async () => {
  mount.publish(secretOf(serverPair(pkiA), pkiA.ca));
  const teamAOfCaA = pkiA.client('team-a-old', '/CN=team-a/O=acme');
  const teamAOfCaB = pkiB.client('team-a-new', '/CN=team-a/O=acme');
  const teamBOfCaB = pkiB.client('team-b-new', '/CN=team-b/O=acme');
  const app = await startAuthApp(`${TOOLS}auth:\n  mtls_tenant_from: cn\n  mtls_scopes: [dispatch, admin]\n`, {
    daemon: { tls: { cert: mount.path('tls.crt'), key: mount.path('tls.key'), ca: mount.path('ca.crt'), refreshIntervalMs: REFRESH_MS } },
    credentials: trusting(pkiA.ca, teamAOfCaA),
  });
  try {
    await app.registry.registerTools({ tools: [{ name: 'a_private', executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect(await overNewConnection(app, trusting(pkiA.ca, teamAOfCaB))).toBe(grpc.status.UNAVAILABLE);

    mount.publish(secretOf(serverPair(pkiA), pkiB.ca));
    await eventually(async () => Array.isArray(await overNewConnection(app, trusting(pkiA.ca, teamAOfCaB))), 5_000, 'client certificates of CA B accepted');

    expect(await overNewConnection(app, trusting(pkiA.ca, teamAOfCaB))).toEqual(['a_private', 'echo']);
    expect(await overNewConnection(app, trusting(pkiA.ca, teamBOfCaB))).toEqual(['echo']);
    expect(await overNewConnection(app, trusting(pkiA.ca, teamAOfCaA))).toBe(grpc.status.UNAVAILABLE);
    expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['a_private', 'echo']);
  } finally {
    await app.close();
  }
});

test('files written one by one mid-rotation: a key of another certificate, then a cut-off certificate, keep the old one serving with one warning each', async () => {
  const cert = mount.path('tls.crt');
  const key = mount.path('tls.key');
  replaceFile(cert, readFileSync(pkiA.serverCert));
  replaceFile(key, readFileSync(pkiA.serverKey));
  const log = capturedLog();
  const app = await startAuthApp(TOOLS, { daemon: { tls: { cert, key, refreshIntervalMs: REFRESH_MS } }, credentials: trusting(pkiA.ca), logger: log.logger });
  const afterRefreshes = () => new Promise((resolve) => setTimeout(resolve, REFRESH_MS * 4));
  try {
    const newCert = readFileSync(pkiB.serverCert);
    replaceFile(cert, newCert);
    await eventually(() => log.count(`the private key in ${key} does not match the certificate in ${cert}`) > 0, 5_000, 'the mismatch warning');
    await afterRefreshes();
    expect(await overNewConnection(app, trusting(pkiA.ca))).toEqual(['echo']);
    expect(await overNewConnection(app, trusting(pkiB.ca))).toBe(grpc.status.UNAVAILABLE);

    replaceFile(cert, newCert.subarray(0, newCert.length / 2));
    await eventually(() => log.count(`a certificate in ${cert} is cut off`) > 0, 5_000, 'the cut-off warning');
    await afterRefreshes();
    expect(await overNewConnection(app, trusting(pkiA.ca))).toEqual(['echo']);

    replaceFile(key, readFileSync(pkiB.serverKey));
    replaceFile(cert, newCert);
    await eventually(async () => Array.isArray(await overNewConnection(app, trusting(pkiB.ca))), 5_000, 'the certificate of CA B served');
    expect(await overNewConnection(app, trusting(pkiA.ca))).toBe(grpc.status.UNAVAILABLE);
    expect(log.count('"TLS certificate refused; keeping the last good one"')).toBe(2);
    expect(log.count('"TLS certificate reloaded"')).toBe(1);
  } finally {
    await app.close();
  }
});
