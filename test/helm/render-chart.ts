// Renders helm/dispatch for the chart tests (there is no helm binary or cluster here) with
// tools/helm-render (Go text/template + sprig + Helm's include/tpl/toYaml/required), parses the
// manifests as Kubernetes does (YAML 1.1) and validates every object against the Kubernetes OpenAPI
// schemas shipped in kubernetes-models (@kubernetes-models/prometheus-operator for ServiceMonitor).
// Like Helm, it first checks the merged values against the chart's values.schema.json
// (values-schema.ts). A test file calls useRenderer() once at its top.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { schemaRefusal } from './values-schema';

export const ROOT = resolve(__dirname, '../..');
export const CHART = join(ROOT, 'helm/dispatch');
const APT_PACKAGES = 'golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev';
export const RELEASE = 'prod';
export const NAMESPACE = 'agents';
export const FULLNAME = 'prod-dispatch';
export const REDIS = `${FULLNAME}-redis`;

export type Obj = { apiVersion: string; kind: string; metadata: { name: string; [k: string]: any }; [k: string]: any };

let work = '';
let renderer = '';

const GOPATH = '/usr/share/gocode';
const RENDERER_SOURCE = join(ROOT, 'tools/helm-render');

/**
 * What the renderer is built from: its own files' text, and the path, size and time of the Go
 * toolchain's binary and of every file of the packaged sources (a package upgrade changes them).
 */
function rendererKey(goVersion: string): string {
  const hash = createHash('sha256').update(goVersion);
  for (const name of readdirSync(RENDERER_SOURCE).sort()) hash.update(`${name}\0`).update(readFileSync(join(RENDERER_SOURCE, name)));
  const stamp = (file: string) => {
    const st = statSync(file);
    hash.update(`${file}\0${st.size}\0${st.mtimeMs}\n`);
  };
  stamp(realpathSync(spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).stdout.trim()));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else stamp(path);
    }
  };
  walk(join(GOPATH, 'src'));
  return hash.digest('hex').slice(0, 24);
}

/**
 * Builds the renderer before the file's tests (Debian's Go packages, no downloads) and removes its
 * directory after. `reuseBuild`: the binary is kept in the temporary directory under a key of
 * what it is built from (rendererKey) and later test files use it, instead of each building it
 * again (~1-2 s each).
 */
export function useRenderer({ reuseBuild = false }: { reuseBuild?: boolean } = {}): void {
  beforeAll(() => {
    const go = spawnSync('go', ['version'], { encoding: 'utf8' });
    if (go.error || go.status !== 0) {
      throw new Error(`'go' is not installed; the Helm chart check needs: apt-get install -y ${APT_PACKAGES}`);
    }
    work = mkdtempSync(join(tmpdir(), 'dispatch-helm-'));
    renderer = join(work, 'helm-render');
    const kept = reuseBuild ? join(tmpdir(), `dispatch-helm-render-${rendererKey(go.stdout)}`) : '';
    if (kept && existsSync(kept)) {
      renderer = kept;
      return;
    }
    const build = spawnSync('go', ['build', '-o', renderer, '.'], {
      cwd: RENDERER_SOURCE,
      encoding: 'utf8',
      env: {
        ...process.env,
        GO111MODULE: 'off', // GOPATH mode against Debian's packaged sources: no downloads
        GOPATH,
        GOFLAGS: '',
        GOCACHE: process.env.GOCACHE || join(tmpdir(), 'dispatch-go-build-cache'),
      },
    });
    if (build.status !== 0) {
      throw new Error(`building tools/helm-render failed (are ${APT_PACKAGES} installed?):\n${build.stderr}`);
    }
    if (kept) {
      // Copied whole under a name of this process's, then renamed: another jest worker never runs half a file.
      const partial = `${kept}.${process.pid}`;
      copyFileSync(renderer, partial);
      renameSync(partial, kept);
    }
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });
}

/** A new directory under the test file's temporary directory (made by useRenderer's beforeAll). */
export function tempDir(prefix: string): string {
  if (!work) throw new Error('tempDir before useRenderer() set up: call it inside a test or a hook');
  return mkdtempSync(join(work, prefix));
}

/** tools/helm-render on `chart` with the release `prod` in namespace `agents`, as spawnSync gives it. */
function helmRender(valueFiles: string[], chart: string, lookupFile?: string): SpawnSyncReturns<string> {
  const args = ['-name', RELEASE, '-namespace', NAMESPACE, ...valueFiles.flatMap((f) => ['-f', f]), ...(lookupFile ? ['-lookup', lookupFile] : []), chart];
  return spawnSync(renderer, args, { encoding: 'utf8' });
}

/**
 * Renders `chart` as `helm template` does: values its values.schema.json refuses fail with Helm's
 * message (exit 1, nothing rendered) before any template runs; the result as spawnSync gives it.
 */
export function render(valueFiles: string[], chart = CHART, lookupFile?: string): SpawnSyncReturns<string> {
  const refused = schemaRefusal(helmRender, chart, valueFiles, tempDir('schema-'));
  if (refused) return { pid: 0, output: [null, '', refused.stderr], stdout: '', stderr: refused.stderr, status: 1, signal: null };
  return helmRender(valueFiles, chart, lookupFile);
}

/** Values given inline are written to a temp file, so every case goes through `-f` like Helm's. */
export function valuesFile(yamlText: string): string {
  const file = join(tempDir('values-'), 'values.yaml');
  writeFileSync(file, yamlText);
  return file;
}

/** `lookupFile`: objects the chart's `lookup` finds, as if in the cluster (an upgrade). */
export function renderObjects(valueFiles: string[], lookupFile?: string): Obj[] {
  const r = render(valueFiles, CHART, lookupFile);
  if (r.status !== 0) throw new Error(`render failed:\n${r.stderr}`);
  expect(r.stdout).toMatch(/^# Source: dispatch\/templates\//m);
  return parseAllDocuments(r.stdout, { version: '1.1' }) // Kubernetes reads YAML 1.1
    .map((doc) => {
      if (doc.errors.length) throw doc.errors[0];
      return doc.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

// The schemas run in this process, from kubernetes-models' CommonJS build: one module per kind,
// loaded once per test file (a child Node process per check cost ~0.8 s of CPU importing them).
/** The schema error of one object, or null; the object goes in as JSON, as the API server reads it. */
function schemaProblem(o: Obj): string | null {
  const pkg = o.apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models';
  try {
    const Model = require(`${pkg}/${o.apiVersion}/${o.kind}`)[o.kind];
    if (typeof Model !== 'function') throw new Error(`no schema for ${o.apiVersion} ${o.kind}`);
    new Model(JSON.parse(JSON.stringify(o))).validate();
    return null;
  } catch (e) {
    return `${o.kind} ${o.metadata && o.metadata.name}: ${(e as Error).message}`;
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Every problem found: schema errors, plus name and label rules the OpenAPI schema leaves to the API server. */
export function problems(objects: Obj[]): string[] {
  const found = objects.map(schemaProblem).filter((e): e is string => e !== null);
  for (const o of objects) {
    const name = o.metadata?.name ?? '';
    if (!DNS_LABEL.test(name) || name.length > 63) found.push(`${o.kind} ${name}: invalid name`);
    for (const [k, v] of Object.entries<string>(o.metadata?.labels ?? {})) {
      if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) found.push(`${o.kind} ${name}: label ${k}=${v}`);
    }
  }
  return found;
}

export const find = (objects: Obj[], kind: string, name = FULLNAME) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
export const deploymentOf = (objects: Obj[]) => find(objects, 'Deployment')!;
export const containerOf = (objects: Obj[]) => deploymentOf(objects).spec.template.spec.containers[0];
export const envOf = (objects: Obj[]) =>
  Object.fromEntries(containerOf(objects).env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));
export const checksumOf = (objects: Obj[]) => deploymentOf(objects).spec.template.metadata.annotations['checksum/config'];
export const bundledRedisOf = (objects: Obj[]) => objects.filter((o) => o.metadata.name === REDIS);
export const redisSetOf = (objects: Obj[]) => find(objects, 'StatefulSet', REDIS)!;
export const redisContainerOf = (objects: Obj[]) => redisSetOf(objects).spec.template.spec.containers[0];
export const redisConfOf = (objects: Obj[]): string => find(objects, 'ConfigMap', REDIS)!.data['redis.conf'];
/** The directives of a redis.conf, without comments and blank lines. */
export const directivesOf = (conf: string) => conf.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));


/** NOTES.txt as `helm install` would print it with these values (rendered through a copy of the chart). */
export function renderNotes(valueFiles: string[]): string {
  const copy = join(tempDir('chart-'), 'dispatch');
  cpSync(CHART, copy, { recursive: true });
  writeFileSync(join(copy, 'templates', 'notes-check.yaml'), 'notes: {{ include "dispatch/templates/NOTES.txt" . | toJson }}\n');
  const r = render(valueFiles, copy);
  if (r.status !== 0 || r.stderr !== '') throw new Error(`render failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS()).find((o) => o?.notes)?.notes as string;
}
