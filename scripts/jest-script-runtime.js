'use strict';
// Jest's runtime, with each module compiled once per worker process by vm.Script and run in each
// test file's context, instead of compiled again for every file by vm.compileFunction (which no
// cache helps: nodejs/node#35375). A vm.Script is bound to no context, and V8 shares the bytecode
// of its functions between the contexts it runs in. Most test files here build the whole app, and
// compiling its ~900 modules again for each was a large part of the CPU of a file. The function is
// wrapped on a line of its own (lineOffset -1), so line and column numbers are the module's own.
const vm = require('node:vm');
const { performance } = require('node:perf_hooks');
const realAsyncHooks = require('node:async_hooks');
const Runtime = require('jest-runtime').default;

/**
 * Globals every module reads as parameters of its wrapper, bound to the test file's own (the same
 * objects: `instanceof` and spies see no difference). A global read in a vm context goes through the
 * context's interceptor, which V8 neither caches nor inlines (jestjs/jest#5163): `Math.min` in a
 * hot loop made closest-match's bounded work 380-470 ms of CPU here against 13-38 ms in plain Node,
 * and the parsers' adversarial inputs 3-4x slower. Not the timers nor `Date` (fake timers replace
 * them on the global), nor anything a test may reassign. A module declaring one of these names
 * with `let`, `const` or `class` at its top level does not compile so: it is compiled as jest does.
 */
const HOISTED = ['Math', 'JSON', 'Number', 'String', 'Array', 'Object', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Symbol', 'RegExp', 'Reflect', 'BigInt', 'Promise', 'Error', 'TypeError', 'Uint8Array', 'ArrayBuffer', 'Buffer'];
/** The values of HOISTED in each context, by context. */
const hoisted = new WeakMap();
const hoistedOf = (vmContext) => {
  let values = hoisted.get(vmContext);
  if (!values) hoisted.set(vmContext, (values = vm.runInContext(`[${HOISTED.join(', ')}]`, vmContext)));
  return values;
};

/** The scripts compiled in this worker, by file: the source they were compiled from, and the script. */
const scripts = new Map();
/** The module executor of the test file running now (a worker runs one at a time), for dynamic imports. */
let running;

/**
 * Module files read, and transformed, in this worker, by file (and by transform options): jest keeps
 * both for one test file only, so each file read every module's source from disk again and its
 * transformed code from jest's cache on disk (a read, a stat and a hash each): ~19% of the CPU of
 * six files that build the app (profiled), and test/guards with test/middleware took 102-106 s of
 * CPU against 112-128 s (interleaved runs). The files do not change during a run; jest's own caches
 * are still filled (a runtime's `transforms` map serves its source maps and coverage).
 */
const texts = new Map();
const buffers = new Map();
const transformed = new Map();

class ScriptRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    shareFileCaches(this.fileCache, this.transformCache);
    this.storages = trackStorages(this.coreModule);
    const executor = this.executor;
    const compileFunction = executor.compile.bind(executor);
    running = executor;
    executor.compile = function compile(scriptSource, filename) {
      const vmContext = executor.environment.getVmContext();
      if (vmContext == null) return null;
      const scriptFilename = executor.resolution.isCoreModule(filename) ? `jest-nodejs-core-${filename}` : filename;
      let kept = scripts.get(scriptFilename);
      if (kept?.source !== scriptSource) {
        try {
          const script = new vm.Script(`(function (${HOISTED.join(', ')}) { return function (${executor.injectedModuleParameters.join(', ')}) {\n${scriptSource}\n}; })`, {
            filename: scriptFilename,
            lineOffset: -1,
            importModuleDynamically: (specifier, _script, importAttributes, ...rest) =>
              running.dynamicImport(specifier, scriptFilename, running.environment.getVmContext(), importAttributes, rest[0]),
          });
          kept = { source: scriptSource, script };
          scripts.set(scriptFilename, kept);
        } catch {
          // Jest's own compile reports the error as it would (an ES module, a syntax error).
          return compileFunction(scriptSource, filename);
        }
      }
      return kept.script.runInContext(vmContext)(...hoistedOf(vmContext));
    };
  }

  /**
   * Lets go of what the process kept of the test file:
   * - Node keeps the resource timing entry of every fetch in a buffer of the process (perf_hooks:
   *   the first 250, as a browser does, until `clearResourceTimings`), and undici's fetch marks one
   *   for each request with its timing info, an object of the test file's context: each entry kept
   *   that file's whole context alive (its module registry: the app's ~900 modules, grpc-js,
   *   ioredis, OpenTelemetry, ajv...). The heap a worker kept after a full GC grew ~8.5 MB a file
   *   (test/guards in band: 69 MB after the first, 269 MB after the 24th, then ~275 MB with the
   *   buffer full); now it stays at 90-160 MB over the 80 files.
   * - the file's AsyncLocalStorages (see trackStorages).
   * A whole run took about what it did (563 s against 556 s, 74 workers against 79, the same CPU in
   * the workers): a worker is still replaced every ~11 files, for its garbage (see jest.config.js).
   */
  teardown() {
    super.teardown();
    performance.clearResourceTimings();
    for (const storage of this.storages.splice(0)) storage.disable();
  }
}

/**
 * Makes `node:async_hooks` in the test file's context the real module with an `AsyncLocalStorage`
 * that lists its instances (a subclass: `instanceof` holds), for the teardown to disable them.
 * Node keeps every enabled AsyncLocalStorage of the process in a list and, for each async resource
 * made (every promise), propagates the store of each one in it; none is ever removed but by
 * `disable()`. jest-circus makes one for each test file (the app none: test/telemetry), so a
 * worker's list grew by one or more per file: with 100 in it a promise cost ~30 times what it does
 * with one (13 s against 0.4 s for a million, measured in plain Node 20).
 */
function trackStorages(coreModule) {
  const storages = [];
  const requireCore = coreModule.require.bind(coreModule);
  let asyncHooks;
  coreModule.require = (moduleName) => {
    const required = requireCore(moduleName);
    if (required !== realAsyncHooks) return required;
    if (!asyncHooks) {
      const AsyncLocalStorage = class AsyncLocalStorage extends realAsyncHooks.AsyncLocalStorage {
        constructor(...args) {
          super(...args);
          storages.push(this);
        }
      };
      asyncHooks = { ...realAsyncHooks, AsyncLocalStorage };
    }
    return asyncHooks;
  };
  return storages;
}

/**
 * Makes `fileCache` read through this worker's maps, and `transformCache` transform through its own
 * (keyed by the transform options that vary, so that neither jest's options object is built again
 * nor its disk cache read); the runtime's own maps of transforms and source maps are filled as jest
 * fills them.
 */
function shareFileCaches(fileCache, transformCache) {
  const readFile = fileCache.readFile.bind(fileCache);
  const readFileBuffer = fileCache.readFileBuffer.bind(fileCache);
  fileCache.readFile = (filename) => remembered(texts, filename, () => readFile(filename));
  fileCache.readFileBuffer = (filename) => remembered(buffers, filename, () => readFileBuffer(filename));
  const transform = transformCache.transform.bind(transformCache);
  transformCache.transform = (filename, options) => {
    if (options?.isInternalModule) return transform(filename, options);
    const key = `${filename}\0${options?.supportsDynamicImport},${options?.supportsExportNamespaceFrom},${options?.supportsStaticESM},${options?.supportsTopLevelAwait}`;
    const file = transformed.get(key);
    if (file === undefined) {
      const code = transform(filename, options);
      transformed.set(key, transformCache.transforms.get(filename));
      return code;
    }
    transformCache.transforms.set(filename, file);
    if (file.sourceMapPath) transformCache.sourceMaps.set(filename, file.sourceMapPath);
    return file.code;
  };
}

function remembered(map, key, make) {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

module.exports = ScriptRuntime;
